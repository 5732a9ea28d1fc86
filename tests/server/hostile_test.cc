// Hostile clients against the real HTTP server on loopback, byte by byte
// over a raw socket: ranges, request bodies, endless headers, pipelining,
// foreign Host names and basic-auth probing (docs/RELIABILITY.md).
#include <arpa/inet.h>
#include <crypt.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "../backends/fake_env.h"
#include "sampler/collect.h"
#include "server/basic_auth.h"
#include "server/host_names.h"
#include "server/http_server.h"

namespace gpuwatch::server {
namespace {

// A TCP connection to the server that sends and reads raw bytes.
class Raw {
 public:
  explicit Raw(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Raw() { close(fd_); }
  bool connected() const { return connected_; }
  // False once the server has closed or reset the connection.
  bool Send(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  // Everything until the server closes, or until nothing comes for `quiet_ms`.
  std::string ReadAll(int quiet_ms = 10'000) {
    std::string out;
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, quiet_ms) <= 0) {
        timed_out_ = true;
        return out;
      }
      char buf[65536];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return out;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  // One response: its head, then Content-Length bytes of body; "" when the
  // server closes first or nothing comes for `quiet_ms`.
  std::string ReadResponse(int quiet_ms = 10'000) {
    for (;;) {
      const auto end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::size_t length = 0;
        const auto at = buffer_.find("Content-Length: ");
        if (at != std::string::npos && at < end) length = std::stoul(buffer_.substr(at + 16));
        if (buffer_.size() >= end + 4 + length) {
          std::string response = buffer_.substr(0, end + 4 + length);
          buffer_.erase(0, end + 4 + length);
          return response;
        }
      }
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, quiet_ms) <= 0) {
        timed_out_ = true;
        return "";
      }
      char buf[65536];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return "";
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
  }
  bool timed_out() const { return timed_out_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool timed_out_ = false;
  std::string buffer_;  // read past the last response ReadResponse returned
};

int StatusOf(const std::string& response) {
  if (response.size() < 12 || !response.starts_with("HTTP/1.1 ")) return -1;
  return std::stoi(response.substr(9, 3));
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class Hostile : public ::testing::Test {
 protected:
  void Start(HttpOptions o = {}) {
    o.port = 0;
    o.api.hostname = "node1";
    auto s = HttpServer::Start(o, hub_);
    ASSERT_TRUE(s) << s.error().message();
    server_ = std::move(*s);
    auto backend = testing::OpenFake("fixed.yaml", 100);
    auto snap = std::make_shared<Snapshot>(CollectOnce(*backend, nullptr, CollectOptions{}));
    snap->sequence = 1;
    hub_->Publish(snap, {}, {}, {});
  }
  std::string Get(const std::string& path, const std::string& headers = "") {
    Raw c(server_->port());
    EXPECT_TRUE(c.connected());
    // One request, then the server's close (it keeps a connection open otherwise).
    c.Send("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers +
           "\r\n");
    return c.ReadAll();
  }
  std::shared_ptr<Hub> hub_ = std::make_shared<Hub>();
  std::unique_ptr<HttpServer> server_;
};

TEST_F(Hostile, RangesAreIgnoredTheWholeBodyOnce) {
  Start();
  const std::string plain = Get("/api/v1/devices");
  ASSERT_EQ(StatusOf(plain), 200) << plain.substr(0, 200);
  std::string ranges = "Range: bytes=0-";
  for (int i = 0; i < 1000; ++i) ranges += ",0-";
  const std::string ranged = Get("/api/v1/devices", ranges + "\r\n");
  EXPECT_EQ(StatusOf(ranged), 200) << ranged.substr(0, 200);
  EXPECT_EQ(Count(ranged, "\"schema\""), 1u) << "one copy of the body";
  EXPECT_LT(ranged.size(), 2 * plain.size());
  EXPECT_EQ(StatusOf(Get("/metrics", "Range: bytes=0-10\r\n")), 200);
}

TEST_F(Hostile, BodiesAreRefusedBeforeTheyAreRead) {
  Start();
  // A chunked body that never ends: the answer comes, and the server hangs up.
  Raw chunked(server_->port());
  ASSERT_TRUE(chunked.Send(
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const std::string chunk = "1000\r\n" + std::string(0x1000, 'a') + "\r\n";
  std::size_t sent = 0;
  std::string answer;
  while (sent < (64u << 20) && answer.empty() && chunked.Send(chunk)) {
    sent += chunk.size();
    if (sent % (16 * chunk.size()) == 0) answer = chunked.ReadAll(1);
  }
  if (answer.empty()) answer = chunked.ReadAll();
  EXPECT_LT(sent, 64u << 20) << "the server read a 64 MiB body";
  EXPECT_EQ(StatusOf(answer), 413) << answer.substr(0, 200);
  // A declared body is refused without waiting for it: 413 on GET, 405 on
  // the methods that are refused anyway.
  for (const auto& [method, status] :
       std::vector<std::pair<std::string, int>>{{"GET", 413}, {"POST", 405}, {"PUT", 405}}) {
    Raw c(server_->port());
    c.Send(method +
           " /api/v1/snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\n");
    const std::string refused = c.ReadAll();
    EXPECT_EQ(StatusOf(refused), status) << method << ": " << refused.substr(0, 200);
    EXPECT_FALSE(c.timed_out()) << method << ": the connection stayed open";
  }
  EXPECT_EQ(StatusOf(Get("/healthz")), 200);
}

TEST_F(Hostile, TheHeaderBlockIsBounded) {
  Start();
  std::string many;
  for (int i = 0; i < 150; ++i) many += "X-" + std::to_string(i) + ": 1\r\n";
  EXPECT_EQ(StatusOf(Get("/metrics", many)), 431);
  // An endless stream of headers: cut once it passes the bound (plus what
  // arrives within one watchdog tick), with a 431 first.
  Raw c(server_->port());
  ASSERT_TRUE(c.Send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  const std::string line = "X-Flood: " + std::string(1000, 'a') + "\r\n";
  std::size_t sent = 0;
  while (sent < (256u << 20) && c.Send(line)) sent += line.size();
  EXPECT_LT(sent, 256u << 20) << "256 MiB of headers were taken";
  const std::string answer = c.ReadAll();
  if (!answer.empty()) {  // (a reset can overtake it)
    EXPECT_EQ(StatusOf(answer), 431) << answer.substr(0, 200);
  }
  EXPECT_EQ(StatusOf(Get("/healthz")), 200);
  EXPECT_NE(
      Get("/metrics").find("gpuwatch_exporter_http_oversize_cuts_total{hostname=\"node1\"} 1"),
      std::string::npos);
}

// cpp-httplib 0.11 drops what it read past a request, so pipelined requests
// close the connection after the first answer (the client retries the rest
// on a new one) at once, not after the keep-alive wait (admission.h).
TEST_F(Hostile, PipelinedRequestsGetAnAnswerAndACleanClose) {
  Start();
  Raw c(server_->port());
  const std::string one = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ASSERT_TRUE(c.Send(one + one + one));
  const std::string answer = c.ReadAll(3000);
  EXPECT_FALSE(c.timed_out()) << "the connection was left hanging: " << answer;
  EXPECT_GE(Count(answer, "HTTP/1.1 200"), 1u) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
}

// A body the server refused to read is never answered as the next request on
// the connection: the refusal ends it (request smuggling through keep-alive).
TEST_F(Hostile, ARefusedBodyIsNeverAnsweredAsARequest) {
  Start();
  const std::string inner = "GET /api/v1/processes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (const std::string method : {"POST", "GET"}) {
    Raw c(server_->port());
    ASSERT_TRUE(c.Send(method + " /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                       std::to_string(inner.size()) + "\r\n\r\n" + inner));
    const std::string answer = c.ReadAll(3000);
    EXPECT_FALSE(c.timed_out()) << method << ": " << answer;
    EXPECT_EQ(Count(answer, "HTTP/1.1 "), 1u) << method << ": " << answer;
    EXPECT_EQ(answer.find("\"processes\""), std::string::npos) << method << ": " << answer;
  }
}

// A client that waits for each answer keeps its connection (keep-alive), on
// every route; one that pipelines later on the same connection is answered
// and closed as above.
TEST_F(Hostile, AClientThatWaitsForEachAnswerKeepsItsConnection) {
  Start();
  Raw c(server_->port());
  for (const char* path : {"/healthz", "/metrics", "/api/v1/devices", "/metrics", "/readyz"}) {
    // As curl, wrk and Prometheus write a request.
    ASSERT_TRUE(c.Send(std::string("GET ") + path +
                       " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: t/1\r\nAccept: */*\r\n"
                       "Accept-Encoding: gzip\r\n\r\n"))
        << path;
    const std::string answer = c.ReadResponse(3000);
    EXPECT_EQ(StatusOf(answer), 200) << path << ": " << answer.substr(0, 300);
    EXPECT_EQ(answer.find("Connection: close"), std::string::npos) << path << ": " << answer;
  }
  const std::string one = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ASSERT_TRUE(c.Send(one + one));
  const std::string answer = c.ReadAll(3000);
  EXPECT_FALSE(c.timed_out()) << answer;
  EXPECT_EQ(StatusOf(answer), 200) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
}

TEST_F(Hostile, OnlyThisServersNamesAreAnswered) {
  HttpOptions o;
  o.allowed_hosts = {"gpu-node-7.cluster.example"};
  Start(o);
  for (const char* path : {"/api/v1/processes", "/metrics", "/healthz", "/readyz", "/"}) {
    Raw c(server_->port());
    c.Send(std::string("GET ") + path + " HTTP/1.1\r\nHost: evil.example.com:9835\r\n\r\n");
    const std::string answer = c.ReadAll();
    EXPECT_EQ(StatusOf(answer), 421) << path << ": " << answer.substr(0, 200);
    EXPECT_EQ(answer.find("\"processes\""), std::string::npos);
  }
  char name[256] = {};
  ASSERT_EQ(gethostname(name, sizeof name - 1), 0);
  for (const std::string& host : std::vector<std::string>{
           "127.0.0.1", "127.0.0.1:9835", "localhost:1", "LOCALHOST", "[::1]:9835",
           "gpu-node-7.cluster.example:443", std::string(name), "web.localhost"}) {
    Raw c(server_->port());
    c.Send("GET /api/v1/processes HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
    EXPECT_EQ(StatusOf(c.ReadResponse()), 200) << host;
  }
  Raw http10(server_->port());
  http10.Send("GET /healthz HTTP/1.0\r\n\r\n");
  EXPECT_EQ(StatusOf(http10.ReadAll()), 200) << "no Host at all: not a browser";
}

TEST(HostNames, AnyWhenAskedAndPortsChecked) {
  const auto any = AllowedHosts("127.0.0.1", {"*"});
  EXPECT_TRUE(HostAllowed(any, "evil.example.com"));
  const auto local = AllowedHosts("127.0.0.1", {});
  EXPECT_FALSE(HostAllowed(local, "127.0.0.1:x"));
  EXPECT_FALSE(HostAllowed(local, "[::1"));
  EXPECT_TRUE(HostAllowed(local, "localhost."));
  const auto all = AllowedHosts("0.0.0.0", {});
  EXPECT_TRUE(all.contains("127.0.0.1"));
}

std::string Bcrypt(const std::string& password, int cost) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(
      crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt),
      nullptr);
  crypt_data data{};
  return crypt_r(password.c_str(), salt, &data);
}

std::string BasicHeader(const std::string& user_password) {
  const auto colon = user_password.find(':');
  return httplib::make_basic_authentication_header(user_password.substr(0, colon),
                                                   user_password.substr(colon + 1))
      .second;
}

TEST(BasicAuth, EveryRefusalCostsOneBcryptAndPassesAreRemembered) {
  Authenticator auth;
  auth.SetUsers({{"alice", Bcrypt("s3cret", 6)}});
  EXPECT_EQ(auth.Check(BasicHeader("mallory:x")), Authenticator::Verdict::kDenied);
  EXPECT_EQ(auth.stats().bcrypt_checks, 1u) << "an unknown user costs what a known one does";
  EXPECT_EQ(auth.Check(BasicHeader("alice:wrong")), Authenticator::Verdict::kDenied);
  EXPECT_EQ(auth.stats().bcrypt_checks, 2u);
  EXPECT_EQ(auth.Check("Bearer nothing"), Authenticator::Verdict::kDenied);
  EXPECT_EQ(auth.stats().bcrypt_checks, 3u);
  EXPECT_EQ(auth.Check(BasicHeader("alice:s3cret")), Authenticator::Verdict::kAllowed);
  EXPECT_EQ(auth.stats().bcrypt_checks, 4u);
  EXPECT_EQ(auth.Check(BasicHeader("alice:s3cret")), Authenticator::Verdict::kAllowed);
  EXPECT_EQ(auth.stats().bcrypt_checks, 4u) << "a remembered pass costs no bcrypt";
  EXPECT_EQ(auth.Check(BasicHeader("alice:s3cret ")), Authenticator::Verdict::kDenied);
  auth.SetUsers({{"alice", Bcrypt("new", 4)}});
  EXPECT_EQ(auth.Check(BasicHeader("alice:s3cret")), Authenticator::Verdict::kDenied)
      << "new users forget the old passes";
}

TEST(BasicAuth, AFloodOfWrongPasswordsIsBoundedAndDoesNotStopAuthorisedUsers) {
  AuthOptions o;
  o.max_concurrent = 2;
  o.max_wait = std::chrono::milliseconds(60'000);
  Authenticator auth(o);
  auth.SetUsers({{"alice", Bcrypt("s3cret", 8)}});
  ASSERT_EQ(auth.Check(BasicHeader("alice:s3cret")), Authenticator::Verdict::kAllowed);
  std::atomic<bool> stop{false};
  std::vector<std::thread> flood;
  for (int i = 0; i < 8; ++i) {
    flood.emplace_back([&] {
      while (!stop)
        EXPECT_NE(auth.Check(BasicHeader("alice:guess")), Authenticator::Verdict::kAllowed);
    });
  }
  while (auth.stats().bcrypt_checks < 20) std::this_thread::yield();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(auth.Check(BasicHeader("alice:s3cret")), Authenticator::Verdict::kAllowed);
  }
  stop = true;
  for (auto& t : flood) t.join();
  EXPECT_LE(auth.stats().max_running, 2);
  EXPECT_EQ(auth.stats().busy, 0u);
}

}  // namespace
}  // namespace gpuwatch::server
