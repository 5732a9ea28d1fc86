// libFuzzer target: the daemon's request handling, from raw bytes. Each input
// goes to the real HTTP server (the one `gpuwatch serve` runs: admission,
// Host check, auth, routes) over a loopback TCP connection; the answer is
// read until the server closes, or until one whole answer came (it keeps a
// connection open for the next request). An input without
// a whole request head is half-closed after it, so the server sees its end
// at once (cpp-httplib 0.11 writes no answer to a half-closed client, so a
// whole request is not half-closed). The first byte picks the plain
// server or one with basic auth. It must answer with an HTTP status line or
// close, never crash, and keep answering /healthz. (A live stream is read to
// its first answer only: it never ends by itself.)
#include <arpa/inet.h>
#include <crypt.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "server/http_server.h"

namespace {

using namespace gpuwatch;

std::shared_ptr<const Snapshot> OneGpu() {
  auto s = std::make_shared<Snapshot>();
  s->time = std::chrono::system_clock::now();
  s->sequence = 1;
  DeviceSample d;
  d.index = 0;
  d.fields[FieldId::kIndex] = Reading::Number(0);
  d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(1e9);
  s->devices.push_back(d);
  return s;
}

struct Servers {
  std::shared_ptr<server::Hub> hub = std::make_shared<server::Hub>();
  std::unique_ptr<server::HttpServer> plain, with_auth;
  Servers() {
    hub->Publish(OneGpu(), {}, {}, {});
    server::HttpOptions o;
    o.port = 0;
    o.request_deadline = std::chrono::milliseconds(2000);
    o.keepalive = std::chrono::seconds(1);  // a stream left behind is noticed within a second
    o.history = [](const server::HistoryQuery&) -> Result<nlohmann::json> {
      return nlohmann::json::object();
    };
    plain = Start(o);
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    crypt_data data{};
    crypt_gensalt_rn("$2b$", 4, nullptr, 0, salt, sizeof salt);
    o.web.users["alice"] = crypt_r("s3cret", salt, &data);
    with_auth = Start(o);
  }
  std::unique_ptr<server::HttpServer> Start(const server::HttpOptions& o) {
    auto s = server::HttpServer::Start(o, hub);
    if (!s) std::abort();
    return std::move(s).value();
  }
};

// Whether `out` starts with one whole response: its head, then Content-Length
// bytes of body.
bool WholeResponse(const std::string& out) {
  const auto end = out.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  const auto at = out.find("\r\nContent-Length: ");
  if (at == std::string::npos || at > end) return false;
  const std::size_t length = std::strtoul(out.c_str() + at + 18, nullptr, 10);
  return out.size() >= end + 4 + length;
}

// Sends `bytes`, half-closes if that is not a whole request head, and returns
// what came back (up to 1 MiB) until the server closes or one whole answer
// came.
std::string Exchange(int port, const std::string& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::abort();
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may hang up early (a refused body)
    sent += static_cast<std::size_t>(n);
  }
  if (bytes.find("\r\n\r\n") == std::string::npos) shutdown(fd, SHUT_WR);
  std::string out;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 15'000) <= 0) std::abort();  // neither answered nor closed
    char buf[65536];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    if (out.size() < (1u << 20)) out.append(buf, static_cast<std::size_t>(n));
    // A live stream never ends by itself: its first answer is enough.
    if (out.find("text/event-stream") != std::string::npos) break;
    // A whole answer on a connection the server keeps open (keep-alive).
    if (WholeResponse(out)) break;
  }
  close(fd);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Servers* servers = new Servers;  // never destroyed: its threads run to the end
  if (size == 0) return 0;
  const bool auth = (data[0] & 1) != 0;
  const int port = auth ? servers->with_auth->port() : servers->plain->port();
  const std::string request(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string answer = Exchange(port, request);
  if (!answer.empty() && answer.rfind("HTTP/1.1 ", 0) != 0) std::abort();
  static unsigned runs = 0;
  if (++runs % 64 == 0) {
    const std::string health = Exchange(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    if (health.rfind("HTTP/1.1 200", 0) != 0) {
      std::fprintf(stderr, "/healthz answered: %.300s\n", health.c_str());
      std::abort();
    }
  }
  return 0;
}
