// The lease table and its file's text (leases.json): the entries, their
// JSON and the bounded, checked parse of it.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "host/leases.h"

namespace gpuwatch::host {
namespace {

using nlohmann::json;
using std::chrono::system_clock;

constexpr int kFormatVersion = 1;

// What the parser keeps of a file within kMaxLeaseFileBytes: a lease is about
// a dozen JSON values, a waiter eleven, nested at most 6 deep.
constexpr std::size_t kMaxValues = kMaxLeaseEntries * 2 * 16;
constexpr int kMaxDepth = 8;

std::string TooMany(std::size_t n, const char* what) {
  return fmt::format("lease file: {} {}, more than the {} a lease file may hold", n, what,
                     kMaxLeaseEntries);
}

// The document, keeping at most kMaxValues values nested at most kMaxDepth
// deep: past either bound nothing more is kept and `over` names the bound.
json ParseBounded(std::string_view text, std::string& over) {
  std::size_t values = 0;
  const json::parser_callback_t keep = [&](int depth, json::parse_event_t event, json&) {
    if (!over.empty()) return false;
    if (event == json::parse_event_t::key || event == json::parse_event_t::object_end ||
        event == json::parse_event_t::array_end) {
      return true;
    }
    if (depth > kMaxDepth) {
      over = fmt::format("lease file: nested deeper than {}", kMaxDepth);
    } else if (++values > kMaxValues) {
      over = fmt::format("lease file: more than {} values (at most {} leases and {} waiters)",
                         kMaxValues, kMaxLeaseEntries, kMaxLeaseEntries);
    }
    return over.empty();
  };
  return json::parse(text, keep);
}

std::int64_t Millis(system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

system_clock::time_point FromMillis(std::int64_t ms) {
  return system_clock::time_point(std::chrono::milliseconds(ms));
}

json HolderJson(const ProcessKey& h) { return json::array({h.pid, h.start_ticks}); }

// Typed reads of one entry; the error names where (`at`) and what.
class Entry {
 public:
  Entry(const json& j, std::string at) : j_(j), at_(std::move(at)) {
    if (!j_.is_object()) throw std::invalid_argument(at_ + ": expected an object");
  }
  std::string Text(const char* key) const {
    const json& v = Get(key);
    if (!v.is_string()) throw std::invalid_argument(Where(key) + ": expected a string");
    return v.get<std::string>();
  }
  std::uint64_t Unsigned(const char* key) const {
    const json& v = Get(key);
    if (!v.is_number_unsigned()) throw std::invalid_argument(Where(key) + ": expected a count");
    return v.get<std::uint64_t>();
  }
  std::int64_t Integer(const char* key) const {
    const json& v = Get(key);
    if (!v.is_number_integer()) throw std::invalid_argument(Where(key) + ": expected an integer");
    return v.get<std::int64_t>();
  }
  // Milliseconds since the Unix epoch, up to the year 2200: system_clock
  // counts nanoseconds in 64 bits, which end in 2262.
  system_clock::time_point Time(const char* key) const {
    const std::int64_t ms = Integer(key);
    if (ms < 0 || ms > 7'258'118'400'000) {
      throw std::invalid_argument(Where(key) + ": expected a time in ms since 1970");
    }
    return FromMillis(ms);
  }
  ProcessKey Holder(const json& v, const std::string& where) const {
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_unsigned() ||
        !v[1].is_number_unsigned() || v[0].get<std::uint64_t>() > 0xffffffffu) {
      throw std::invalid_argument(where + ": expected [pid, start_ticks]");
    }
    return {static_cast<std::uint32_t>(v[0].get<std::uint64_t>()), v[1].get<std::uint64_t>()};
  }
  const json& Get(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end()) throw std::invalid_argument(Where(key) + ": missing");
    return *it;
  }
  std::string Where(const char* key) const { return at_ + "." + key; }

 private:
  const json& j_;
  std::string at_;
};
}  // namespace

std::string LeaseFileTooLarge(std::string_view size) {
  return fmt::format("lease file: {} bytes, more than the {} ({} MiB) a lease file may hold", size,
                     kMaxLeaseFileBytes, kMaxLeaseFileBytes >> 20);
}

int LeaseTable::Prune(const std::function<bool(const ProcessKey&)>& alive) {
  const std::size_t before = leases.size() + queue.size();
  std::erase_if(leases, [&](const Lease& l) {
    return std::none_of(l.holders.begin(), l.holders.end(), alive);
  });
  std::erase_if(queue, [&](const Waiter& w) { return !alive(w.holder); });
  return static_cast<int>(before - leases.size() - queue.size());
}

const Lease* LeaseTable::Find(std::string_view uuid) const {
  for (const Lease& l : leases) {
    if (l.uuid == uuid) return &l;
  }
  return nullptr;
}

int LeaseTable::Position(std::uint64_t ticket) const {
  for (std::size_t i = 0; i < queue.size(); ++i) {
    if (queue[i].ticket == ticket) return static_cast<int>(i) + 1;
  }
  return 0;
}

int LeaseTable::Remove(std::uint64_t ticket) {
  const std::size_t before = leases.size() + queue.size();
  std::erase_if(leases, [&](const Lease& l) { return l.ticket == ticket; });
  std::erase_if(queue, [&](const Waiter& w) { return w.ticket == ticket; });
  return static_cast<int>(before - leases.size() - queue.size());
}

std::string LeaseTableToJson(const LeaseTable& table) {
  json leases = json::array();
  for (const Lease& l : table.leases) {
    json holders = json::array();
    for (const ProcessKey& h : l.holders) holders.push_back(HolderJson(h));
    leases.push_back({{"uuid", l.uuid},
                      {"device", l.device},
                      {"holders", holders},
                      {"user", l.user},
                      {"command", l.command},
                      {"ticket", l.ticket},
                      {"since_ms", Millis(l.since)}});
  }
  json queue = json::array();
  for (const Waiter& w : table.queue) {
    queue.push_back({{"ticket", w.ticket},
                     {"holder", HolderJson(w.holder)},
                     {"user", w.user},
                     {"command", w.command},
                     {"count", w.count},
                     {"wants", w.wants},
                     {"since_ms", Millis(w.since)}});
  }
  json out = {{"version", kFormatVersion},
              {"next_ticket", table.next_ticket},
              {"leases", leases},
              {"queue", queue}};
  return out.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<LeaseTable> ParseLeaseTable(std::string_view text) {
  LeaseTable table;
  if (text.size() > kMaxLeaseFileBytes) {
    return Status::InvalidArgument(LeaseFileTooLarge(std::to_string(text.size())));
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return table;
  try {
    std::string over;
    const json root = ParseBounded(text, over);
    if (!over.empty()) return Status::InvalidArgument(over);
    const Entry top(root, "lease file");
    if (!top.Get("version").is_number_integer() || top.Integer("version") != kFormatVersion) {
      return Status::InvalidArgument(
          fmt::format("lease file: version {} is not {}", top.Integer("version"), kFormatVersion));
    }
    table.next_ticket = top.Unsigned("next_ticket");
    const json& leases = top.Get("leases");
    const json& queue = top.Get("queue");
    if (!leases.is_array() || !queue.is_array()) {
      return Status::InvalidArgument("lease file: leases and queue must be lists");
    }
    if (leases.size() > kMaxLeaseEntries)
      return Status::InvalidArgument(TooMany(leases.size(), "leases"));
    if (queue.size() > kMaxLeaseEntries)
      return Status::InvalidArgument(TooMany(queue.size(), "waiters"));
    for (std::size_t i = 0; i < leases.size(); ++i) {
      const Entry e(leases[i], fmt::format("leases[{}]", i));
      Lease l;
      l.uuid = e.Text("uuid");
      l.device = e.Text("device");
      const json& holders = e.Get("holders");
      if (!holders.is_array() || holders.empty()) {
        throw std::invalid_argument(e.Where("holders") + ": expected a non-empty list");
      }
      for (std::size_t k = 0; k < holders.size(); ++k) {
        l.holders.push_back(e.Holder(holders[k], fmt::format("{}[{}]", e.Where("holders"), k)));
      }
      l.user = e.Text("user");
      l.command = e.Text("command");
      l.ticket = e.Unsigned("ticket");
      l.since = e.Time("since_ms");
      table.leases.push_back(std::move(l));
    }
    for (std::size_t i = 0; i < queue.size(); ++i) {
      const Entry e(queue[i], fmt::format("queue[{}]", i));
      Waiter w;
      w.ticket = e.Unsigned("ticket");
      w.holder = e.Holder(e.Get("holder"), e.Where("holder"));
      w.user = e.Text("user");
      w.command = e.Text("command");
      const std::uint64_t count = e.Unsigned("count");
      if (count < 1 || count > 4096) {
        throw std::invalid_argument(e.Where("count") + ": expected 1 to 4096");
      }
      w.count = static_cast<int>(count);
      w.wants = e.Text("wants");
      w.since = e.Time("since_ms");
      table.queue.push_back(std::move(w));
    }
  } catch (const json::exception& e) {
    return Status::InvalidArgument(fmt::format("lease file: {}", e.what()));
  } catch (const std::invalid_argument& e) {
    return Status::InvalidArgument(fmt::format("lease file: {}", e.what()));
  }
  std::sort(table.queue.begin(), table.queue.end(),
            [](const Waiter& a, const Waiter& b) { return a.ticket < b.ticket; });
  for (const Lease& l : table.leases) table.next_ticket = std::max(table.next_ticket, l.ticket + 1);
  for (const Waiter& w : table.queue) table.next_ticket = std::max(table.next_ticket, w.ticket + 1);
  return table;
}

}  // namespace gpuwatch::host
