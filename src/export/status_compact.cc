// RenderCompactStatus (status_text.h): one line per GPU.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "export/status_parts.h"
#include "export/status_text.h"

namespace gpuwatch {
namespace {

using namespace status_parts;  // the parts the full view draws alike

// Columns a line takes on a terminal: every UTF-8 sequence one (the view
// draws no wide characters), escape sequences none.
int Columns(std::string_view s) {
  int n = 0;
  bool escape = false;
  for (unsigned char ch : s) {
    if (escape) {
      escape = ch != 'm';
      continue;
    }
    if (ch == 0x1b) {
      escape = true;
      continue;
    }
    if ((ch & 0xC0) != 0x80) ++n;
  }
  return n;
}

// "89.5G", "512M": a process's memory in the few characters a line has.
std::string BriefBytes(double bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  if (bytes >= 1024 * kMiB) return fmt::format("{:.1f}G", bytes / (1024 * kMiB));
  return fmt::format("{:.0f}M", bytes / kMiB);
}

// "H200" for "NVIDIA H200": the vendor is the same on every line.
std::string BriefName(const Reading& name) {
  if (!name.is_text()) return Na(name);
  std::string s = name.text();
  for (std::string_view prefix : {"NVIDIA ", "Tesla "}) {
    if (s.starts_with(prefix)) s.erase(0, prefix.size());
  }
  return Cut(s, 14);
}

// "alice(89.5G)" for each process, largest first.
std::vector<std::string> Holders(const DeviceSample& d) {
  std::vector<const ProcessSample*> by_memory;
  for (const auto& p : d.processes) by_memory.push_back(&p);
  auto memory = [](const ProcessSample* p) {
    const Reading& r = p->fields[FieldId::kProcessUsedMemoryBytes];
    return r.is_number() ? r.number() : -1.0;
  };
  std::stable_sort(
      by_memory.begin(), by_memory.end(),
      [&](const ProcessSample* a, const ProcessSample* b) { return memory(a) > memory(b); });
  std::vector<std::string> out;
  for (const ProcessSample* p : by_memory) {
    std::string who = Cut(p->host.user.empty() ? fmt::format("pid {}", p->pid) : p->host.user, 12);
    if (memory(p) >= 0) who += fmt::format("({})", BriefBytes(memory(p)));
    out.push_back(std::move(who));
  }
  return out;
}

// The holders that fit in `room` columns (all when there is no limit), then "+N"
// for the rest; "N procs" when not even the first fits, "" when that does not.
std::string FitHolders(const std::vector<std::string>& holders, std::optional<int> room) {
  std::string out;
  for (std::size_t i = 0; i < holders.size(); ++i) {
    const std::string item = (out.empty() ? "" : " ") + holders[i];
    const std::size_t rest = holders.size() - i - 1;
    const int more = rest == 0 ? 0 : static_cast<int>(fmt::format(" +{}", rest).size());
    if (room && Columns(out) + Columns(item) + more > *room) {
      if (!out.empty()) return out + fmt::format(" +{}", holders.size() - i);
      const std::string count =
          fmt::format("{} proc{}", holders.size(), holders.size() == 1 ? "" : "s");
      return Columns(count) <= *room ? count : "";
    }
    out += item;
  }
  return out;
}

std::string DeviceLine(const Snapshot& s, const DeviceSample& d, const StatusTextOptions& o,
                       const Painter& paint, int index_width) {
  const auto& f = d.fields;
  std::string line =
      fmt::format("{} {:<14}", paint(kBold, fmt::format("GPU {:>{}}", d.index, index_width)),
                  BriefName(f[FieldId::kName]));
  if (d.health == DeviceHealth::kLost) {
    return line + " " + paint(kRed, fmt::format("LOST: {}", d.health_detail));
  }
  const Reading& temp = f[FieldId::kTemperatureGpuCelsius];
  const Reading& util = f[FieldId::kUtilizationGpuRatio];
  const Reading& power = f[FieldId::kPowerDrawWatts];
  const Reading& limit = f[FieldId::kPowerLimitEnforcedWatts];
  const std::string temp_text =
      temp.is_number() ? fmt::format("{:>3.0f}°C", temp.number()) : fmt::format("{:>5}", Na(temp));
  line += fmt::format(" {} {:>4}",
                      paint(temp.is_number() ? Level(temp.number(), 70, 80) : "", temp_text),
                      paint(LooksStarved(d) ? kYellow : "", Percent(util)));
  line += fmt::format(
      " {:>8}",
      fmt::format("{}/{}W", power.is_number() ? fmt::format("{:.0f}", power.number()) : Na(power),
                  limit.is_number() ? fmt::format("{:.0f}", limit.number()) : Na(limit)));
  const Reading& used = f[FieldId::kMemoryUsedBytes];
  const Reading& total = f[FieldId::kMemoryTotalBytes];
  if (used.is_number() && total.is_number() && total.number() > 0) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    const double ratio = used.number() / total.number();
    line += fmt::format(" {} {:>11}", paint(Level(ratio, 0.75, 0.9), Bar(ratio, 10)),
                        fmt::format("{:.1f}/{:.1f}G", used.number() / kGiB, total.number() / kGiB));
  } else {
    line += fmt::format(" {:<10} {:>11}", "", "mem " + Na(used));
  }
  if (d.health == DeviceHealth::kStale) line += " " + paint(kRed, "STALE");
  const Reading& reasons = f[FieldId::kClockEventReasons];
  if (reasons.is_number()) {
    const std::string why =
        BriefClockEventReasons(static_cast<unsigned long long>(reasons.number()));
    if (!why.empty()) line += " " + paint(kRed, "held: " + why);
  }
  const auto migs = std::count_if(s.mig_devices.begin(), s.mig_devices.end(),
                                  [&](const DeviceSample& m) { return m.index == d.index; });
  if (migs > 0) line += fmt::format(" MIG×{}", migs);
  if (const Reading& uuid = f[FieldId::kUuid]; uuid.is_text()) {
    if (const host::Lease* l = o.leases.Find(uuid.text())) {
      line += " " + paint(kYellow, fmt::format("leased #{}{}", l->ticket,
                                               l->user.empty() ? "" : " " + Cut(l->user, 12)));
    }
  }
  if (!o.processes) return line;
  if (d.processes.empty()) return line + " " + paint(kDim, "-");
  std::optional<int> room;
  if (o.width > 0) room = o.width - Columns(line) - 1;
  const std::string holders = FitHolders(Holders(d), room);
  return holders.empty() ? line : line + " " + holders;
}

}  // namespace

std::string RenderCompactStatus(const Snapshot& s, const StatusTextOptions& o) {
  const Painter paint{o.color};
  std::string out = Heading(s, o, paint);
  if (s.devices.empty()) out += "no GPUs found\n";
  int index_width = 1;
  for (const auto& d : s.devices) {
    index_width = std::max(index_width, static_cast<int>(fmt::format("{}", d.index).size()));
  }
  for (const auto& d : s.devices) out += DeviceLine(s, d, o, paint, index_width) + "\n";
  const std::string queue = Queue(o, paint);
  if (!queue.empty()) out += "\n" + queue;
  return out;
}

}  // namespace gpuwatch
