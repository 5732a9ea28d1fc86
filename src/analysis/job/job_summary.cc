#include "analysis/job/job_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpuwatch {
namespace {

using nlohmann::json;
constexpr double kGiB = 1024.0 * 1024 * 1024;

double Percentile(const std::array<std::uint32_t, 1001>& bins, std::uint64_t count, double q) {
  if (count == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    seen += bins[i];
    if (seen >= std::max<std::uint64_t>(rank, 1)) return static_cast<double>(i) / 1000.0;
  }
  return 1.0;
}

std::string Duration(std::chrono::milliseconds d) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s >= 3600) return fmt::format("{}h {:02}m {:02}s", s / 3600, s / 60 % 60, s % 60);
  if (s >= 60) return fmt::format("{}m {:02}s", s / 60, s % 60);
  return fmt::format("{:.1f}s", static_cast<double>(d.count()) / 1000.0);
}

}  // namespace

std::vector<std::pair<std::string, double>> FrameworkPeaks(const FrameworkMemory& f) {
  // A framework's own high-water mark ("peak_allocated") and the peak of what
  // it reported ("allocated") name one thing: the higher of the two.
  std::map<std::string, double> by_name;
  for (const auto& [key, bytes] : f.peak) {
    const std::string name = key.starts_with("peak_") ? key.substr(5) : key;
    double& peak = by_name[name];
    peak = std::max(peak, bytes);
  }
  return {by_name.begin(), by_name.end()};
}

JobSummary::JobSummary(std::vector<std::string> command,
                       std::chrono::system_clock::time_point started, bool every_device)
    : every_device_(every_device) {
  report_.command = std::move(command);
  report_.started = started;
}

void JobSummary::Observe(const Snapshot& s, const std::set<std::uint32_t>& job_pids) {
  if (s.stale) return;
  if (!first_sample_) first_sample_ = s.time;
  last_sample_ = s.time;
  live_ = job_pids;
  double job_bytes = 0;
  for (const auto& d : s.devices) {
    if (d.health != DeviceHealth::kOk) continue;
    bool used_by_job = false;
    for (const auto& p : d.processes) {
      if (job_pids.count(p.pid) == 0) continue;
      used_by_job = true;
      job_pids_.insert(p.pid);
      const Reading& mem = p.fields[FieldId::kProcessUsedMemoryBytes];
      const double bytes = mem.is_number() ? mem.number() : 0;
      job_bytes += bytes;
      JobProcessPeak& peak = peaks_[{d.index, ProcessKey{p.pid, p.host.start_ticks}}];
      peak.gpu = d.index;
      peak.pid = p.pid;
      if (peak.command.empty())
        peak.command = p.host.command.empty() ? p.host.name : p.host.command;
      peak.peak_bytes = std::max(peak.peak_bytes, bytes);
    }
    if (used_by_job || every_device_) report_.gpus.insert(d.index);
    if (report_.gpus.count(d.index) == 0) continue;
    const Reading& used = d.fields[FieldId::kMemoryUsedBytes];
    if (used.is_number()) {
      double& peak = report_.peak_device_used_bytes[d.index];
      peak = std::max(peak, used.number());
    }
    if (const Reading& total = d.fields[FieldId::kMemoryTotalBytes]; total.is_number()) {
      report_.device_total_bytes[d.index] = total.number();
    }
    const Reading& util = d.fields[FieldId::kUtilizationGpuRatio];
    if (util.is_number()) {
      Histogram& h = util_[d.index];
      const auto bin =
          static_cast<std::size_t>(std::clamp(std::lround(util.number() * 1000), 0L, 1000L));
      ++h.bins[bin];
      ++h.count;
      h.sum += util.number();
    }
    const Reading& energy = d.fields[FieldId::kEnergyJoules];
    if (energy.is_number()) {
      auto [it, fresh] = energy_first_last_.try_emplace(d.index, energy.number(), energy.number());
      if (!fresh) it->second.second = energy.number();
    }
    if (const Reading& power = d.fields[FieldId::kPowerDrawWatts]; power.is_number()) {
      PowerIntegral& p = power_[d.index];
      if (p.last && s.time > *p.last) {
        p.joules += 0.5 * (p.last_watts + power.number()) *
                    std::chrono::duration<double>(s.time - *p.last).count();
      }
      p.last = s.time;
      p.last_watts = power.number();
    }
  }
  report_.peak_job_bytes = std::max(report_.peak_job_bytes, job_bytes);
}

void JobSummary::AddEvent(const Event& e) {
  if (report_.events.size() < 1000) report_.events.push_back(e);
  const bool verdict = e.kind == Event::Kind::kLeakSuspected || e.kind == Event::Kind::kLeakUpdated;
  const bool forecast = e.kind == Event::Kind::kOomForecast;
  const bool cleared =
      e.kind == Event::Kind::kLeakCleared || e.kind == Event::Kind::kOomForecastCleared;
  if (!verdict && !forecast && !cleared) return;
  const int gpu = e.gpu.value_or(-1);
  const std::optional<std::uint32_t> pid =
      e.process ? std::optional<std::uint32_t>(e.process->pid) : std::nullopt;
  auto it = std::find_if(report_.leaks.begin(), report_.leaks.end(),
                         [&](const JobLeak& l) { return l.gpu == gpu && l.pid == pid; });
  if (cleared) {
    if (it != report_.leaks.end()) {
      it->cleared = true;
      // The snapshot that cleared it, observed first, no longer has the process.
      it->ended = pid && !live_.contains(*pid);
    }
    return;
  }
  if (it == report_.leaks.end()) {
    it = report_.leaks.insert(report_.leaks.end(), JobLeak{});
    it->gpu = gpu;
    it->pid = pid;
    it->first = e.time;
  }
  if (it->verdict && forecast) return;  // a verdict outranks a forecast
  it->verdict = it->verdict || verdict;
  it->cleared = false;
  it->ended = false;
  it->rate_bytes_per_s = e.value;
  it->time_to_full = e.time_to_full;
  it->message = e.message;
}

void JobSummary::AddMark(const std::string& kind, const std::string& value) {
  report_.last_marks[kind] = value;
  if (kind == "step") ++report_.steps;
}

void JobSummary::AddFrameworkMemory(int device, const std::string& framework,
                                    const std::map<std::string, double, std::less<>>& bytes,
                                    std::optional<std::uint32_t> pid) {
  auto& reports = framework_reports_[device];
  // A process no longer among the job's holds nothing now: its last report
  // leaves the sum (a worker that ended, then the next one, are not added up).
  std::erase_if(reports, [&](const auto& r) {
    return r.first != 0 && r.first != pid && !live_.empty() && !live_.contains(r.first);
  });
  reports[pid.value_or(0)] = bytes;
  FrameworkMemory& f = report_.framework_memory[device];
  f.framework = framework;
  f.processes = static_cast<int>(reports.size());
  f.last.clear();
  for (const auto& [p, counters] : reports) {
    for (const auto& [k, v] : counters) f.last[k] += v;
  }
  for (const auto& [k, v] : f.last) f.peak[k] = std::max(f.peak[k], v);
}

JobReport JobSummary::Finish(std::chrono::system_clock::time_point ended,
                             std::optional<int> exit_status,
                             const std::map<int, std::chrono::milliseconds>& starved,
                             const std::map<int, std::chrono::milliseconds>& throttled) const {
  JobReport r = report_;
  r.whole_machine = every_device_;
  r.duration = std::chrono::duration_cast<std::chrono::milliseconds>(ended - r.started);
  if (first_sample_) {
    r.sampled =
        std::chrono::duration_cast<std::chrono::milliseconds>(*last_sample_ - *first_sample_);
  }
  // Only the job's own: its processes, and the GPUs it used (a whole
  // machine's recording: every GPU and process).
  if (!every_device_) {
    std::erase_if(r.leaks, [&](const JobLeak& l) {
      return l.pid ? !job_pids_.contains(*l.pid) : !r.gpus.contains(l.gpu);
    });
  }
  const auto verdict =
      std::find_if(r.leaks.begin(), r.leaks.end(), [](const JobLeak& l) { return l.verdict; });
  if (verdict != r.leaks.end()) {
    r.leak_verdict = "leak suspected: " + verdict->message;
  } else if (!r.leaks.empty()) {
    r.leak_verdict = "out-of-memory forecast: " + r.leaks.front().message;
  } else if (r.sampled < leak_verdict_span_) {
    r.leak_verdict = fmt::format(
        "too short for a leak verdict: {} of samples (a verdict needs {}; growth that would fill "
        "a GPU soon is reported at once, and there was none)",
        Duration(r.sampled), Duration(leak_verdict_span_));
  }
  r.exit_status = exit_status;
  for (const auto& [gpu, h] : util_) {
    r.utilization[gpu] = {h.count, h.count ? h.sum / static_cast<double>(h.count) : 0,
                          Percentile(h.bins, h.count, 0.5), Percentile(h.bins, h.count, 0.95)};
  }
  // The driver's energy counter where it advanced while the job ran; else
  // (a job shorter than the counter's period, or no counter) the power
  // samples integrated.
  for (const auto& [gpu, fl] : energy_first_last_) {
    if (fl.second > fl.first) r.energy_joules[gpu] = fl.second - fl.first;
  }
  for (const auto& [gpu, p] : power_) {
    if (!r.energy_joules.count(gpu) && p.joules > 0) r.energy_joules[gpu] = p.joules;
  }
  for (const auto& [gpu, t] : starved) {
    if (r.gpus.count(gpu)) r.starved[gpu] = t;
  }
  for (const auto& [gpu, t] : throttled) {
    if (r.gpus.count(gpu)) r.throttled[gpu] = t;
  }
  for (const auto& [key, peak] : peaks_) r.processes.push_back(peak);
  std::sort(r.processes.begin(), r.processes.end(),
            [](const auto& a, const auto& b) { return a.peak_bytes > b.peak_bytes; });
  return r;
}

std::vector<SummaryRow> JobReportRows(const JobReport& r) {
  std::vector<SummaryRow> rows;
  std::string command;
  for (const auto& a : r.command) command += (command.empty() ? "" : " ") + a;
  if (!command.empty()) rows.push_back({"command", command});
  if (r.lease) {
    std::string devices;
    for (const auto& d : r.lease->devices) devices += (devices.empty() ? "" : ",") + d;
    rows.push_back({"leased", fmt::format("GPU {} (ticket #{}), after waiting {}", devices,
                                          r.lease->ticket, Duration(r.lease->waited))});
  }
  rows.push_back({"duration", Duration(r.duration)});
  if (r.exit_status) rows.push_back({"exit status", std::to_string(*r.exit_status)});
  if (!r.unmonitored.empty()) {
    rows.push_back({"GPUs", "not monitored: " + r.unmonitored});
  } else if (r.gpus.empty()) {
    rows.push_back({"GPUs", r.whole_machine ? "none: the recording holds no GPU sample"
                                            : "none: no process of the job used a GPU"});
  }
  double energy_total = 0;
  for (int gpu : r.gpus) {
    const double total = r.device_total_bytes.count(gpu) ? r.device_total_bytes.at(gpu) : 0;
    const double peak = r.peak_device_used_bytes.count(gpu) ? r.peak_device_used_bytes.at(gpu) : 0;
    std::string value = fmt::format("peak memory {:.1f} / {:.1f} GiB", peak / kGiB, total / kGiB);
    if (auto it = r.utilization.find(gpu); it != r.utilization.end() && it->second.samples > 0) {
      value += fmt::format("  util mean {:.0f} %  median {:.0f} %  p95 {:.0f} %",
                           it->second.mean * 100, it->second.median * 100, it->second.p95 * 100);
    }
    rows.push_back({fmt::format("GPU {}", gpu), value});
    if (auto it = r.energy_joules.find(gpu); it != r.energy_joules.end()) {
      energy_total += it->second;
    }
    if (auto it = r.starved.find(gpu); it != r.starved.end() && it->second.count() > 0) {
      rows.push_back({"", fmt::format("starved {}", Duration(it->second))});
    }
    if (auto it = r.throttled.find(gpu); it != r.throttled.end() && it->second.count() > 0) {
      rows.push_back({"", fmt::format("clocks held down {}", Duration(it->second))});
    }
  }
  if (r.unmonitored.empty() && r.whole_machine) {
    std::set<std::uint32_t> pids;
    for (const auto& p : r.processes) pids.insert(p.pid);
    rows.push_back({"processes", fmt::format("peak memory {:.2f} GiB together ({} process{})",
                                             r.peak_job_bytes / kGiB, pids.size(),
                                             pids.size() == 1 ? "" : "es")});
  } else if (r.unmonitored.empty()) {
    rows.push_back({"job memory", fmt::format("peak {:.2f} GiB over all its processes",
                                              r.peak_job_bytes / kGiB)});
  }
  for (std::size_t i = 0; i < r.processes.size() && i < 5; ++i) {
    const auto& p = r.processes[i];
    rows.push_back({"", fmt::format("pid {:>7}  GPU {}  peak {:.2f} GiB  {}", p.pid, p.gpu,
                                    p.peak_bytes / kGiB, p.command.substr(0, 60))});
  }
  for (const auto& [gpu, f] : r.framework_memory) {
    std::string value = f.processes > 1 ? fmt::format("GPU {} {} ({} processes, summed):", gpu,
                                                      f.framework, f.processes)
                                        : fmt::format("GPU {} {}:", gpu, f.framework);
    const char* separator = " ";
    for (const auto& [name, bytes] : FrameworkPeaks(f)) {
      value += fmt::format("{}peak {} {:.2f} GiB", separator, name, bytes / kGiB);
      separator = ", ";
    }
    rows.push_back({"framework", value});
  }
  if (!r.gpus.empty())
    rows.push_back(
        {"energy", fmt::format("{:.0f} J ({:.4f} kWh)", energy_total, energy_total / 3.6e6)});
  if (r.steps > 0 || !r.last_marks.empty()) {
    std::string value = fmt::format("{} step marks", r.steps);
    for (const auto& [k, v] : r.last_marks) value += fmt::format(", last {} {}", k, v);
    rows.push_back({"marks", value});
  }
  // Alerts and diagnoses: each its own row (its count), its events below it.
  for (const auto& [label, kind] : {std::pair{"alerts", Event::Kind::kAlertFiring},
                                    std::pair{"diagnoses", Event::Kind::kDiagnosis}}) {
    const auto count = std::count_if(r.events.begin(), r.events.end(),
                                     [kind = kind](const Event& e) { return e.kind == kind; });
    rows.push_back({label, std::to_string(count)});
    for (const auto& e : r.events) {
      if (e.kind == kind) rows.push_back({"", fmt::format("- {}: {}", e.source, e.message)});
    }
  }
  if (r.leaks.empty()) {
    rows.push_back({"leaks", r.leak_verdict});
  } else {
    const auto verdicts =
        std::count_if(r.leaks.begin(), r.leaks.end(), [](const JobLeak& l) { return l.verdict; });
    const auto forecasts = static_cast<std::ptrdiff_t>(r.leaks.size()) - verdicts;
    std::string head;
    if (verdicts > 0) head = fmt::format("{} leak{} suspected", verdicts, verdicts == 1 ? "" : "s");
    if (forecasts > 0) {
      head += fmt::format("{}{} out-of-memory forecast{}", head.empty() ? "" : ", ", forecasts,
                          forecasts == 1 ? "" : "s");
    }
    rows.push_back({"leaks", head});
    for (const auto& l : r.leaks) {
      rows.push_back({"", fmt::format("- {}{}", l.message,
                                      !l.cleared ? " (still growing at the end)"
                                      : l.ended  ? " (until its process ended)"
                                                 : " (then stopped)")});
    }
  }
  return rows;
}

std::string RenderJobReport(const JobReport& r) {
  std::string out = "\n── gpuwatch run summary ──────────────────────────────────────────\n";
  for (const auto& row : JobReportRows(r)) {
    out += fmt::format("{:<12} {}\n", row.label, row.value);
  }
  return out;
}

json JobReportToJson(const JobReport& r) {
  auto ms = [](std::chrono::milliseconds d) { return static_cast<double>(d.count()) / 1000.0; };
  json gpus = json::array();
  double energy_total = 0;
  for (int gpu : r.gpus) {
    json g = {{"gpu", gpu}};
    if (auto it = r.peak_device_used_bytes.find(gpu); it != r.peak_device_used_bytes.end())
      g["peak_memory_used_bytes"] = it->second;
    if (auto it = r.device_total_bytes.find(gpu); it != r.device_total_bytes.end())
      g["memory_total_bytes"] = it->second;
    if (auto it = r.utilization.find(gpu); it != r.utilization.end()) {
      g["utilization"] = {{"samples", it->second.samples},
                          {"mean", it->second.mean},
                          {"median", it->second.median},
                          {"p95", it->second.p95}};
    }
    if (auto it = r.energy_joules.find(gpu); it != r.energy_joules.end()) {
      g["energy_joules"] = it->second;
      energy_total += it->second;
    }
    g["starved_seconds"] = r.starved.count(gpu) ? ms(r.starved.at(gpu)) : 0.0;
    g["throttled_seconds"] = r.throttled.count(gpu) ? ms(r.throttled.at(gpu)) : 0.0;
    gpus.push_back(std::move(g));
  }
  json procs = json::array();
  for (const auto& p : r.processes) {
    procs.push_back({{"gpu", p.gpu},
                     {"pid", p.pid},
                     {"command", p.command},
                     {"peak_memory_bytes", p.peak_bytes}});
  }
  json events = json::array();
  for (const auto& e : r.events) {
    events.push_back({{"kind", EventKindName(e.kind)},
                      {"severity", SeverityName(e.severity)},
                      {"source", e.source},
                      {"gpu", e.gpu ? json(*e.gpu) : json(nullptr)},
                      {"message", e.message}});
  }
  json leaks = json::array();
  for (const auto& l : r.leaks) {
    leaks.push_back(
        {{"kind", l.verdict ? "leak" : "oom_forecast"},
         {"gpu", l.gpu},
         {"pid", l.pid ? json(*l.pid) : json(nullptr)},
         {"rate_bytes_per_second", l.rate_bytes_per_s ? json(*l.rate_bytes_per_s) : json(nullptr)},
         {"time_to_full_seconds", l.time_to_full ? json(l.time_to_full->count()) : json(nullptr)},
         {"standing", !l.cleared},
         {"process_ended", l.ended},
         {"message", l.message}});
  }
  json framework = json::object();
  for (const auto& [gpu, f] : r.framework_memory) {
    framework[std::to_string(gpu)] = {
        {"framework", f.framework}, {"last", f.last}, {"peak", f.peak}, {"processes", f.processes}};
  }
  json lease = nullptr;
  if (r.lease) {
    lease = {{"devices", r.lease->devices},
             {"ticket", r.lease->ticket},
             {"granted_at_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   r.lease->granted.time_since_epoch())
                                   .count()},
             {"waited_seconds", ms(r.lease->waited)}};
  }
  return json{{"schema", "gpuwatch.run/1"},
              {"command", r.command},
              {"duration_seconds", ms(r.duration)},
              {"exit_status", r.exit_status ? json(*r.exit_status) : json(nullptr)},
              {"gpus", std::move(gpus)},
              {"peak_job_memory_bytes", r.peak_job_bytes},
              {"processes", std::move(procs)},
              {"energy_joules", energy_total},
              {"energy_kwh", energy_total / 3.6e6},
              {"steps", r.steps},
              {"last_marks", r.last_marks},
              {"framework_memory", std::move(framework)},
              {"events", std::move(events)},
              {"leak_verdict", r.leak_verdict},
              {"leaks", std::move(leaks)},
              {"sampled_seconds", ms(r.sampled)},
              {"lease", std::move(lease)},
              {"unmonitored", r.unmonitored.empty() ? json(nullptr) : json(r.unmonitored)},
              {"environment", r.environment}};
}

}  // namespace gpuwatch
