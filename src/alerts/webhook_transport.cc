#include <fmt/format.h>
#include <httplib.h>

#include "alerts/transport.h"
#include "core/mutex.h"

namespace gpuwatch::alerts {
namespace {

// POSTs the event JSON; retries with exponential backoff, then gives up.
class WebhookTransport final : public Transport {
 public:
  WebhookTransport(const WebhookAction& action, std::string origin, std::string path)
      : action_(action), client_(origin), path_(std::move(path)) {
    auto sec = std::chrono::duration_cast<std::chrono::seconds>(action.timeout);
    auto usec = std::chrono::duration_cast<std::chrono::microseconds>(action.timeout - sec);
    client_.set_connection_timeout(static_cast<time_t>(sec.count()),
                                   static_cast<time_t>(usec.count()));
    client_.set_read_timeout(static_cast<time_t>(sec.count()), static_cast<time_t>(usec.count()));
    client_.set_write_timeout(static_cast<time_t>(sec.count()), static_cast<time_t>(usec.count()));
  }

  Status Deliver(const Event&, std::string_view json, std::stop_token stop) override {
    std::string last_error;
    std::chrono::milliseconds backoff = action_.backoff;
    int attempts = 0;
    for (int attempt = 0; attempt <= action_.retries; ++attempt) {
      ++attempts;
      httplib::Headers headers = {{"User-Agent", "gpuwatch"}};
      httplib::Result res =
          client_.Post(path_.c_str(), headers, json.data(), json.size(), "application/json");
      if (res && res->status >= 200 && res->status < 300) return Status::Ok();
      last_error = res ? fmt::format("HTTP {}", res->status) : httplib::to_string(res.error());
      if (attempt == action_.retries || !Wait(backoff, stop)) break;
      backoff *= 2;
    }
    return Status::Unavailable(
        fmt::format("gave up after {} attempt(s): {}", attempts, last_error));
  }

  std::string Describe() const override { return "webhook " + action_.url; }

 private:
  // Sleeps `d` unless a stop is requested first; returns false on stop.
  static bool Wait(std::chrono::milliseconds d, std::stop_token stop) {
    Mutex m;
    StopCondVar cv;
    MutexLock lock(m);
    return !cv.WaitFor(lock, stop, d, [] { return false; }) && !stop.stop_requested();
  }

  WebhookAction action_;
  httplib::Client client_;
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<Transport>> MakeWebhookTransport(const WebhookAction& action) {
  std::string_view url = action.url;
  std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return Status::InvalidArgument(fmt::format("webhook url {} has no scheme", action.url));
  }
  std::size_t path_start = url.find('/', scheme_end + 3);
  std::string origin(url.substr(0, path_start));
  std::string path =
      path_start == std::string_view::npos ? "/" : std::string(url.substr(path_start));
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
  if (url.starts_with("https://")) {
    return Status::InvalidArgument(
        fmt::format("webhook {}: this build has no TLS support; use http://", action.url));
  }
#endif
  return std::unique_ptr<Transport>(std::make_unique<WebhookTransport>(action, origin, path));
}

}  // namespace gpuwatch::alerts
