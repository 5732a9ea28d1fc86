#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>

#include "alerts/transport.h"
#include "core/printable.h"

namespace gpuwatch::alerts {
namespace {

class LogTransport final : public Transport {
 public:
  explicit LogTransport(LogSink sink) : sink_(std::move(sink)) {}
  Status Deliver(const Event& event, std::string_view, std::stop_token) override {
    sink_(LogLine(event));
    return Status::Ok();
  }
  std::string Describe() const override { return "log"; }

 private:
  LogSink sink_;
};

}  // namespace

std::string LogLine(const Event& event) {
  std::time_t t = std::chrono::system_clock::to_time_t(event.time);
  std::string_view what = event.kind == Event::Kind::kAlertFiring     ? "ALERT"
                          : event.kind == Event::Kind::kAlertResolved ? "RESOLVED"
                                                                      : EventKindName(event.kind);
  return Printable(fmt::format("[{:%H:%M:%S}] {} {} {}: {}", fmt::localtime(t), what,
                               SeverityName(event.severity), event.source, event.message));
}

std::unique_ptr<Transport> MakeLogTransport(LogSink sink) {
  return std::make_unique<LogTransport>(std::move(sink));
}

}  // namespace gpuwatch::alerts
