#include "analysis/rules/event_json.h"

#include <nlohmann/json.hpp>

#include "core/time_text.h"

namespace gpuwatch::rules {

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
