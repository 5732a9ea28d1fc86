#include "tui/remote_api.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/printable.h"
#include "export/api_documents.h"
#include "tui/connect_reason.h"

namespace gpuwatch::tui {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxAnswerBytes = std::size_t{16} << 20;  // a snapshot of 8 GPUs: ~100 KiB
constexpr int kMaxJsonDepth = 32;                               // the API's documents: 8
constexpr int kFirstEvents = 50;

std::string_view StatusText(int code) {
  switch (code) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 421:
      return "Misdirected Request";  // the daemon does not know the name asked for
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

json ParseBounded(const std::string& body) {
  const json::parser_callback_t keep = [](int depth, json::parse_event_t, json&) {
    return depth <= kMaxJsonDepth;
  };
  return json::parse(body, keep, /*allow_exceptions=*/false);
}

// What an answer's body says, for a one-line reason: its "error", else its
// lines joined; printable, at most 240 characters.
std::string BodySays(const std::string& body) {
  const json j = ParseBounded(body);
  std::string says;
  if (j.is_object() && j.contains("error") && j["error"].is_string()) {
    says = j["error"].get<std::string>();
  } else {
    for (std::size_t start = 0; start < body.size();) {
      const std::size_t end = std::min(body.find('\n', start), body.size());
      const std::string_view line = TrimBlanks(std::string_view(body).substr(start, end - start));
      if (!line.empty()) says += (says.empty() ? "" : " ") + std::string(line);
      start = end + 1;
    }
  }
  says = Printable(TrimBlanks(says));
  if (says.size() > 240) says = says.substr(0, 237) + "...";
  return says;
}

}  // namespace

// One answer: the parsed body of a 200, or why there is none.
struct RemoteHost::Answer {
  std::string down;  // "" when it answered 200 with JSON
  int status = 0;
  std::string body;
  json doc;
};

RemoteHost::RemoteHost(RemoteEndpoint endpoint) : endpoint_(std::move(endpoint)) {
  if (endpoint_.scheme == "https") {
    auto tls = std::make_unique<httplib::SSLClient>(endpoint_.host, endpoint_.port);
    tls_ = tls.get();
    client_ = std::move(tls);
    if (!endpoint_.ca_file.empty()) client_->set_ca_cert_path(endpoint_.ca_file);
    client_->enable_server_certificate_verification(!endpoint_.insecure);
  } else {
    client_ = std::make_unique<httplib::ClientImpl>(endpoint_.host, endpoint_.port);
  }
  const auto t = std::chrono::duration_cast<std::chrono::microseconds>(endpoint_.timeout);
  const auto sec = static_cast<time_t>(t.count() / 1'000'000);
  const auto usec = static_cast<time_t>(t.count() % 1'000'000);
  client_->set_connection_timeout(sec, usec);
  client_->set_read_timeout(sec, usec);
  client_->set_write_timeout(sec, usec);
  client_->set_keep_alive(false);
  if (!endpoint_.user.empty()) client_->set_basic_auth(endpoint_.user, endpoint_.password);
}

RemoteHost::~RemoteHost() = default;
RemoteHost::RemoteHost(RemoteHost&&) noexcept = default;
RemoteHost& RemoteHost::operator=(RemoteHost&&) noexcept = default;

RemoteHost::Answer RemoteHost::Get(const std::string& path) {
  Answer a;
  const httplib::Headers headers = {{"Accept", "application/json"}, {"User-Agent", "gpuwatch-top"}};
  const auto start = std::chrono::steady_clock::now();
  httplib::Result res = client_->Get(path, headers, [&](const char* data, std::size_t size) {
    if (a.body.size() + size > kMaxAnswerBytes) return false;
    a.body.append(data, size);
    return true;
  });
  const bool took_timeout = std::chrono::steady_clock::now() - start >= endpoint_.timeout;
  if (!res) {
    const std::string timed_out = "timed out after " + Duration(endpoint_.timeout);
    switch (res.error()) {
      case httplib::Error::Connection:
        a.down = WhyNoConnection(endpoint_.host, endpoint_.port, endpoint_.timeout);
        if (a.down.empty()) a.down = "cannot connect";
        break;
      case httplib::Error::ConnectionTimeout:
        a.down = timed_out;
        break;
      case httplib::Error::Read:
        a.down = took_timeout ? timed_out
                 : tls_ == nullptr
                     ? "the connection closed without an answer (a TLS port? try https://)"
                     : "the connection closed without an answer";
        break;
      case httplib::Error::Write:
        a.down = took_timeout ? timed_out : "the connection closed while asking";
        break;
      case httplib::Error::Canceled:
        a.down = fmt::format("the answer to {} is larger than {} MiB", path, kMaxAnswerBytes >> 20);
        break;
      case httplib::Error::SSLConnection:
        a.down = "TLS: handshake failed (a plain HTTP port? try http://)";
        break;
      case httplib::Error::SSLLoadingCerts:
        a.down = endpoint_.ca_file.empty() ? "TLS: cannot load the system's CA certificates"
                                           : "TLS: cannot load the CA bundle " + endpoint_.ca_file;
        break;
      case httplib::Error::SSLServerVerification: {
        const long verify = tls_ != nullptr ? tls_->get_openssl_verify_result() : X509_V_OK;
        a.down = verify != X509_V_OK
                     ? fmt::format("TLS: certificate verify failed: {}",
                                   X509_verify_cert_error_string(verify))
                     : fmt::format("TLS: certificate verify failed: it does not name {}",
                                   endpoint_.host);
        break;
      }
      default:
        a.down = "HTTP client: " + httplib::to_string(res.error());
    }
    return a;
  }
  a.status = res->status;
  if (a.status == 401) {
    a.down = "401 Unauthorized: check --remote-user / GPUWATCH_REMOTE_PASSWORD";
  } else if (a.status == 404) {
    a.down = fmt::format("not a gpuwatch API: HTTP 404 for {}", path);
  } else if (a.status != 200) {
    const std::string says = BodySays(a.body);
    a.down = fmt::format("HTTP {}{}{}{}", a.status, StatusText(a.status).empty() ? "" : " ",
                         StatusText(a.status), says.empty() ? "" : ": " + says);
  } else {
    a.doc = ParseBounded(a.body);
    if (a.doc.is_discarded()) a.down = fmt::format("not a gpuwatch API: {} is not JSON", path);
  }
  return a;
}

bool RemoteHost::Refresh(HostState& state, std::vector<Event>& events) {
  Answer a = Get("/api/v1/snapshot");
  if (a.down.empty()) {
    auto parsed = ParseSnapshotDocument(a.doc, "");
    if (!parsed) {
      a.down = Printable(parsed.error().message());
    } else if (!parsed->snapshot) {
      // It answers, but has not read its GPUs yet: /readyz says why.
      const Answer ready = Get("/readyz");
      std::string why = ready.status == 503 ? BodySays(ready.body) : "";
      if (why.starts_with("not ready: ")) why = why.substr(11);
      state.down = "no sample yet" + (why.empty() ? "" : ": " + why);
      TakeEvents(events);
      return true;
    } else {
      state = std::move(*parsed);
      state.label = endpoint_.label;
      state.down.clear();
      state.updated = std::chrono::system_clock::now();
      TakeEvents(events);
      return true;
    }
  }
  state.down = a.down;
  if (state.label.empty()) state.label = endpoint_.label;
  return false;
}

void RemoteHost::TakeEvents(std::vector<Event>& events) {
  // The API's since is inclusive and to the nanosecond of a double: ask from
  // a millisecond before the newest event taken and leave out those taken.
  constexpr auto kOverlap = std::chrono::milliseconds(1);
  const std::string path = events_started_
                               ? fmt::format("/api/v1/events?since={:.6f}",
                                             std::max(0.0, UnixSeconds(events_since_ - kOverlap)))
                               : fmt::format("/api/v1/events?limit={}", kFirstEvents);
  const Answer a = Get(path);
  if (!a.down.empty()) return;
  auto parsed = ParseEventsDocument(a.doc, "");
  if (!parsed) return;
  events_started_ = true;
  for (Event& e : *parsed) {
    if (e.time < events_since_ - kOverlap) continue;
    std::string key = EventDocument(e).dump();
    const auto seen = std::find_if(events_seen_.begin(), events_seen_.end(),
                                   [&](const auto& s) { return s.second == key; });
    if (seen != events_seen_.end()) continue;
    events_since_ = std::max(events_since_, e.time);
    events_seen_.emplace_back(e.time, std::move(key));
    events.push_back(std::move(e));
  }
  // Only those within the overlap can come again.
  std::erase_if(events_seen_, [&](const auto& s) { return s.first < events_since_ - kOverlap; });
}

}  // namespace gpuwatch::tui
