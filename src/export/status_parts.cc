#include "export/status_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

namespace gpuwatch::status_parts {

std::string Painter::operator()(std::string_view style, std::string_view text) const {
  if (!on || style.empty()) return std::string(text);
  return fmt::format("{}{}{}", style, text, kReset);
}

std::string_view Level(double v, double warn, double bad) {
  if (v >= bad) return kRed;
  if (v >= warn) return kYellow;
  return "";
}

std::string Na(const Reading& r) { return r.missing() == Missing::kDeviceLost ? "lost" : "N/A"; }

std::string Percent(const Reading& r) {
  return r.is_number() ? fmt::format("{:3.0f}%", r.number() * 100) : Na(r);
}

std::string Bar(double ratio, int width) {
  const int full = static_cast<int>(ratio * width + 0.5);
  std::string s;
  for (int i = 0; i < width; ++i) s += i < full ? "█" : "░";
  return s;
}

std::string Cut(const std::string& raw, int width) {
  std::string s;
  for (char ch : raw) {
    const bool space = static_cast<unsigned char>(ch) < 0x20 || ch == ' ';
    if (space && (s.empty() || s.back() == ' ')) continue;
    s += space ? ' ' : ch;
  }
  if (static_cast<int>(s.size()) <= width) return s;
  return s.substr(0, static_cast<std::size_t>(std::max(0, width - 1))) + "…";
}

std::string Container(const HostProcess& h) {
  if (!h.pod.empty()) return "pod " + h.pod;  // the namespace is in --json
  if (!h.container_id.empty()) {
    return fmt::format("{} {}", h.container_runtime.empty() ? "ctr" : h.container_runtime,
                       h.container_id.substr(0, 12));
  }
  if (!h.slurm_job_id.empty()) return "slurm " + h.slurm_job_id;
  return "-";
}

bool LooksStarved(const DeviceSample& d) {
  const Reading& util = d.fields[FieldId::kUtilizationGpuRatio];
  return util.is_number() && util.number() < 0.3 && !d.processes.empty();
}

std::string Heading(const Snapshot& s, const StatusTextOptions& o, const Painter& paint) {
  std::string out;
  const std::string banner_style = std::string(kBold) + std::string(kYellow);
  if (s.demo) {
    out += paint(banner_style, fmt::format("DEMO: simulated GPUs ({}), not this machine's hardware",
                                           o.demo_source.empty() ? "demo fleet" : o.demo_source));
    out += "\n";
  }
  if (!o.replay_source.empty()) {
    out += paint(banner_style, fmt::format("REPLAY of {}: recorded GPUs, not this machine's now",
                                           o.replay_source));
    out += "\n";
  }
  const Reading& driver = s.host[FieldId::kDriverVersion];
  const Reading& cuda = s.host[FieldId::kCudaDriverVersion];
  const std::time_t secs = std::chrono::system_clock::to_time_t(s.time);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  out += fmt::format("{}  driver {}  CUDA {}  {} GPU{}  {}\n\n", o.hostname,
                     driver.is_text() ? driver.text() : Na(driver),
                     cuda.is_text() ? cuda.text() : Na(cuda), s.devices.size(),
                     s.devices.size() == 1 ? "" : "s", when);
  return out;
}

// "queue: 2 waiting" and a line per waiter, first served first.
std::string Queue(const StatusTextOptions& o, const Painter& paint) {
  const auto& queue = o.leases.queue;
  std::string out;
  if (queue.empty()) return out;
  std::size_t ticket_width = 0, user_width = 0;
  for (const host::Waiter& w : queue) {
    ticket_width = std::max(ticket_width, fmt::format("#{}", w.ticket).size());
    user_width = std::max(user_width, Cut(w.user.empty() ? "?" : w.user, 16).size());
  }
  out += paint(kBold, fmt::format("queue: {} waiting", queue.size())) + "\n";
  for (const host::Waiter& w : queue) {
    out += fmt::format("  {:<{}}  {:<{}}  {}  waiting {}\n", fmt::format("#{}", w.ticket),
                       ticket_width, Cut(w.user.empty() ? "?" : w.user, 16), user_width, w.wants,
                       HumanDuration(o.now - w.since));
  }
  return out;
}

}  // namespace gpuwatch::status_parts
