#include "analysis/job/job_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpuwatch {
namespace {

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

}  // namespace

std::string JobDurationText(std::chrono::milliseconds d) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s >= 3600) return fmt::format("{}h {:02}m {:02}s", s / 3600, s / 60 % 60, s % 60);
  if (s >= 60) return fmt::format("{}m {:02}s", s / 60, s % 60);
  return fmt::format("{:.1f}s", static_cast<double>(d.count()) / 1000.0);
}

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
      // Its newest command line: a process seen before its exec finished is
      // named by what it became. "[comm]" (no command line: mid-exec, or
      // exiting) names it only until a command line is read.
      const bool has_command_line =
          !p.host.command.empty() && p.host.command != "[" + p.host.name + "]";
      if (has_command_line || peak.command.empty())
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
        JobDurationText(r.sampled), JobDurationText(leak_verdict_span_));
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

}  // namespace gpuwatch
