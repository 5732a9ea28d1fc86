#include "host/lease_json.h"

#include "core/time_text.h"

namespace gpuwatch {

using nlohmann::json;

json LeaseToJson(const host::Lease& l) {
  json holders = json::array();
  for (const ProcessKey& h : l.holders) {
    holders.push_back({{"pid", h.pid}, {"start_ticks", h.start_ticks}});
  }
  return {{"device", l.device},
          {"uuid", l.uuid},
          {"pid", l.holders.empty() ? json(nullptr) : json(l.holders.front().pid)},
          {"user", l.user},
          {"command", l.command},
          {"ticket", l.ticket},
          {"since", Rfc3339(l.since)},
          {"holders", std::move(holders)}};
}

json WaiterToJson(const host::Waiter& w, int position) {
  return {{"ticket", w.ticket}, {"position", position},     {"pid", w.holder.pid},
          {"user", w.user},     {"command", w.command},     {"count", w.count},
          {"wants", w.wants},   {"since", Rfc3339(w.since)}};
}

json LeasesToJson(const host::LeaseTable& table) {
  json leases = json::array();
  for (const host::Lease& l : table.leases) leases.push_back(LeaseToJson(l));
  json queue = json::array();
  for (std::size_t i = 0; i < table.queue.size(); ++i) {
    queue.push_back(WaiterToJson(table.queue[i], static_cast<int>(i) + 1));
  }
  return {{"leases", std::move(leases)}, {"queue", std::move(queue)}};
}

}  // namespace gpuwatch
