#include "alerts/event_json.h"

#include <nlohmann/json.hpp>

#include "export/lines.h"

namespace gpuwatch::alerts {

std::string EventJson(const Event& event, std::string_view host) {
  // The event as JSON Lines and the API have it (export/lines.h), in the
  // webhook's envelope: version 1's keys first, in their documented order
  // (`rule` is `source`; `process` names the pid with its start time), then
  // every other key of the event.
  const nlohmann::json common = EventToJson(event);
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["kind"] = common["kind"];
  j["rule"] = common["source"];
  j["severity"] = common["severity"];
  j["time"] = common["time"];
  j["host"] = host;
  j["gpu"] = common["gpu"];
  if (event.process) {
    j["process"] = {{"pid", event.process->pid}, {"start_ticks", event.process->start_ticks}};
  } else {
    j["process"] = nullptr;
  }
  j["value"] = common["value"];
  j["message"] = common["message"];
  for (const auto& [key, value] : common.items()) {
    if (!j.contains(key)) j[key] = value;
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpuwatch::alerts
