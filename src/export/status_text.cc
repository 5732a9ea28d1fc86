#include "export/status_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "export/snapshot_json.h"
#include "export/status_parts.h"

namespace gpuwatch {
namespace {

using namespace status_parts;  // the parts the compact view draws alike

std::string Who(const ProcessSample& p) {
  switch (p.host.visibility) {
    case HostProcess::Visibility::kVisible:
      return p.host.command.empty() ? p.host.name : p.host.command;
    case HostProcess::Visibility::kOtherPidNs:
      return fmt::format("host pid {}, not visible here", p.pid);
    case HostProcess::Visibility::kExited:
      return "(exited)";
    case HostProcess::Visibility::kNoPermission:
      return "(no permission to read /proc)";
  }
  return "";
}

void RenderProcesses(const DeviceSample& d, const StatusTextOptions& o, const Painter& paint,
                     std::string& out) {
  if (d.processes.empty()) {
    out += paint(kDim, "  no processes\n");
    return;
  }
  out += paint(kDim, fmt::format("  {:>8}  {:<10} {:>10} {:>4} {:>5}  {:<20} {}\n", "PID", "USER",
                                 "GPU MEM", "SM", "CPU", "CONTAINER", "COMMAND"));
  for (const auto& p : d.processes) {
    const Reading& mem = p.fields[FieldId::kProcessUsedMemoryBytes];
    const Reading& sm = p.fields[FieldId::kProcessSmUtilizationRatio];
    const Reading& cpu = p.fields[FieldId::kProcessCpuRatio];
    std::string command = Who(p);
    if (p.gpu_instance_id) {
      command = fmt::format("[MIG gi {} ci {}] {}", *p.gpu_instance_id,
                            p.compute_instance_id.value_or(0), command);
    }
    out += fmt::format("  {:>8}  {:<10} {:>10} {:>4} {:>5}  {:<20} {}\n", p.pid,
                       Cut(p.host.user.empty() ? "?" : p.host.user, 10),
                       mem.is_number() ? HumanBytes(mem.number()) : Na(mem),
                       sm.is_number() ? fmt::format("{:.0f}%", sm.number() * 100) : "-",
                       cpu.is_number() ? fmt::format("{:.0f}%", cpu.number() * 100) : "-",
                       Cut(Container(p.host), 20), Cut(command, o.command_width));
  }
}

// "  leased to pid 4242 (alice: python train.py) for 2m 10s, ticket #12",
// indented by `indent`; "" when `uuid` is not leased.
std::string LeaseLine(const Reading& uuid, const StatusTextOptions& o, const Painter& paint,
                      int indent) {
  const host::Lease* l = uuid.is_text() ? o.leases.Find(uuid.text()) : nullptr;
  if (l == nullptr) return "";
  std::string line = "leased";
  if (!l->holders.empty()) line += fmt::format(" to pid {}", l->holders.front().pid);
  std::string who = l->user;
  if (!l->command.empty()) who += (who.empty() ? "" : ": ") + Cut(l->command, o.command_width);
  if (!who.empty()) line += fmt::format(" ({})", who);
  line += fmt::format(" for {}, ticket #{}", HumanDuration(o.now - l->since), l->ticket);
  return fmt::format("{:{}}{}\n", "", indent, paint(kYellow, line));
}

void RenderDevice(const Snapshot& s, const DeviceSample& d, const StatusTextOptions& o,
                  const Painter& paint, std::string& out) {
  const auto& f = d.fields;
  const Reading& name = f[FieldId::kName];
  const Reading& bus = f[FieldId::kPciBusId];
  const Reading& pstate = f[FieldId::kPerformanceState];
  out +=
      paint(kBold, fmt::format("GPU {}  {:<28}", d.index, name.is_text() ? name.text() : Na(name)));
  out += fmt::format("  {}", bus.is_text() ? bus.text() : "");
  if (pstate.is_number()) out += fmt::format("  P{:.0f}", pstate.number());
  out += "\n";
  out += LeaseLine(d.fields[FieldId::kUuid], o, paint, 2);
  if (d.health == DeviceHealth::kLost) {
    out += paint(kRed, fmt::format("  LOST: {} (re-probed every sample)\n", d.health_detail));
    return;
  }
  if (d.health == DeviceHealth::kStale) {
    out += paint(kRed, fmt::format("  STALE: {}\n", d.health_detail));
  }

  const Reading& temp = f[FieldId::kTemperatureGpuCelsius];
  const Reading& util = f[FieldId::kUtilizationGpuRatio];
  const Reading& power = f[FieldId::kPowerDrawWatts];
  const Reading& limit = f[FieldId::kPowerLimitEnforcedWatts];
  const Reading& sm = f[FieldId::kClockSmHertz];
  const Reading& memclk = f[FieldId::kClockMemoryHertz];
  const std::string temp_text =
      temp.is_number() ? fmt::format("{:.0f}°C", temp.number()) : Na(temp);
  const bool starved = LooksStarved(d);
  out += fmt::format(
      "  temp {}  util {}  power {} / {}  clocks sm {}  mem {}\n",
      paint(temp.is_number() ? Level(temp.number(), 70, 80) : "", temp_text),
      paint(starved ? kYellow : "", Percent(util)),
      power.is_number() ? fmt::format("{:.0f} W", power.number()) : Na(power),
      limit.is_number() ? fmt::format("{:.0f} W", limit.number()) : Na(limit),
      sm.is_number() ? fmt::format("{:.0f} MHz", sm.number() / 1e6) : Na(sm),
      memclk.is_number() ? fmt::format("{:.0f} MHz", memclk.number() / 1e6) : Na(memclk));

  const Reading& used = f[FieldId::kMemoryUsedBytes];
  const Reading& total = f[FieldId::kMemoryTotalBytes];
  const Reading& reserved = f[FieldId::kMemoryReservedBytes];
  if (used.is_number() && total.is_number() && total.number() > 0) {
    const double ratio = used.number() / total.number();
    out += fmt::format("  memory {} {} / {} used ({:.1f}%)  reserved {}\n",
                       paint(Level(ratio, 0.75, 0.9), Bar(ratio, 24)), HumanBytes(used.number()),
                       HumanBytes(total.number()), ratio * 100,
                       reserved.is_number() ? HumanBytes(reserved.number()) : Na(reserved));
  } else {
    out += fmt::format("  memory {}\n", Na(used));
  }
  const Reading& reasons = f[FieldId::kClockEventReasons];
  if (reasons.is_number()) {
    const std::string why =
        DescribeClockEventReasons(static_cast<unsigned long long>(reasons.number()));
    if (!why.empty()) out += paint(kRed, fmt::format("  clocks held down: {}\n", why));
  }
  for (const auto& m : s.mig_devices) {
    if (m.index != d.index) continue;
    const Reading& mused = m.fields[FieldId::kMemoryUsedBytes];
    const Reading& mtotal = m.fields[FieldId::kMemoryTotalBytes];
    const Reading& mname = m.fields[FieldId::kName];
    out += fmt::format("  MIG {}  gi {} ci {}  {}  memory {} / {}\n", m.mig_index.value_or(0),
                       m.gpu_instance_id.value_or(0), m.compute_instance_id.value_or(0),
                       mname.is_text() ? mname.text() : Na(mname),
                       mused.is_number() ? HumanBytes(mused.number()) : Na(mused),
                       mtotal.is_number() ? HumanBytes(mtotal.number()) : Na(mtotal));
    out += LeaseLine(m.fields[FieldId::kUuid], o, paint, 4);
  }
  if (o.processes) RenderProcesses(d, o, paint, out);
}

}  // namespace

std::string HumanBytes(double bytes) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB", bytes / kGiB);
  return fmt::format("{:.0f} MiB", bytes / (1024.0 * 1024.0));
}

std::string HumanDuration(std::chrono::system_clock::duration d) {
  const long long s =
      std::max<long long>(0, std::chrono::duration_cast<std::chrono::seconds>(d).count());
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m {}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h {}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d {}h", s / 86400, s % 86400 / 3600);
}

namespace {

struct ClockReason {
  unsigned long long bit;
  std::string_view text;   // the full view's words
  std::string_view brief;  // the compact view's
};
constexpr ClockReason kClockReasons[] = {{0x2, "applications clocks setting", "app clocks"},
                                         {0x4, "sw power cap", "power cap"},
                                         {0x8, "hw slowdown", "hw slowdown"},
                                         {0x10, "sync boost", "sync boost"},
                                         {0x20, "sw thermal slowdown", "thermal"},
                                         {0x40, "hw thermal slowdown", "thermal"},
                                         {0x80, "hw power brake slowdown", "power brake"},
                                         {0x100, "display clock setting", "display"}};

std::string JoinReasons(unsigned long long mask, std::string_view ClockReason::*words) {
  std::string out;
  std::string_view last;
  for (const ClockReason& r : kClockReasons) {
    if ((mask & r.bit) == 0 || r.*words == last) continue;
    if (!out.empty()) out += ", ";
    out += r.*words;
    last = r.*words;
  }
  return out;
}

}  // namespace

std::string DescribeClockEventReasons(unsigned long long mask) {
  return JoinReasons(mask, &ClockReason::text);
}

std::string BriefClockEventReasons(unsigned long long mask) {
  return JoinReasons(mask, &ClockReason::brief);
}

FieldMask StatusTextFields() {
  FieldMask m;
  for (FieldId id :
       {FieldId::kName, FieldId::kUuid, FieldId::kPciBusId, FieldId::kPerformanceState,
        FieldId::kTemperatureGpuCelsius, FieldId::kUtilizationGpuRatio, FieldId::kPowerDrawWatts,
        FieldId::kPowerLimitEnforcedWatts, FieldId::kClockSmHertz, FieldId::kClockMemoryHertz,
        FieldId::kClockEventReasons, FieldId::kMemoryUsedBytes, FieldId::kMemoryTotalBytes,
        FieldId::kMemoryReservedBytes, FieldId::kProcessUsedMemoryBytes,
        FieldId::kProcessSmUtilizationRatio, FieldId::kProcessCpuRatio}) {
    Set(m, id);
  }
  Set(m, FieldId::kMigMode);  // not shown, but whether to read the GPU's MIG devices
  return m;
}

std::string RenderStatus(const Snapshot& s, const StatusTextOptions& o) {
  const Painter paint{o.color};
  std::string out;
  out += Heading(s, o, paint);
  if (s.devices.empty()) out += "no GPUs found\n";
  for (const auto& d : s.devices) {
    RenderDevice(s, d, o, paint, out);
    out += "\n";
  }
  out += Queue(o, paint);
  return out;
}

}  // namespace gpuwatch
