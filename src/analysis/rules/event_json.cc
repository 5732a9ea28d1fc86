#include "analysis/rules/event_json.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace gpuwatch::rules {

std::string Rfc3339(std::chrono::system_clock::time_point t) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  auto secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  auto frac = static_cast<int>(ms - static_cast<std::int64_t>(secs) * 1000);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", fmt::gmtime(secs), frac);
}

std::string EventJson(const Event& event, std::string_view host) {
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["kind"] = EventKindName(event.kind);
  j["rule"] = event.source;
  j["severity"] = SeverityName(event.severity);
  j["time"] = Rfc3339(event.time);
  j["host"] = host;
  j["gpu"] = event.gpu ? nlohmann::ordered_json(*event.gpu) : nlohmann::ordered_json(nullptr);
  if (event.process) {
    j["process"] = {{"pid", event.process->pid}, {"start_ticks", event.process->start_ticks}};
  } else {
    j["process"] = nullptr;
  }
  j["value"] = event.value ? nlohmann::ordered_json(*event.value) : nlohmann::ordered_json(nullptr);
  j["message"] = event.message;
  if (event.time_to_full) j["time_to_full_s"] = event.time_to_full->count();
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpuwatch::rules
