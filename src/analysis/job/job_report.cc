// The end of a job's summary as it is shown: label / value rows (the text
// summary and the HTML report's table), the text, and the JSON of --json.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/job/job_summary.h"

namespace gpuwatch {
namespace {

using nlohmann::json;
constexpr double kGiB = 1024.0 * 1024 * 1024;

}  // namespace

std::vector<SummaryRow> JobReportRows(const JobReport& r) {
  std::vector<SummaryRow> rows;
  std::string command;
  for (const auto& a : r.command) command += (command.empty() ? "" : " ") + a;
  if (!command.empty()) rows.push_back({"command", command});
  if (r.lease) {
    std::string devices;
    for (const auto& d : r.lease->devices) devices += (devices.empty() ? "" : ",") + d;
    rows.push_back({"leased", fmt::format("GPU {} (ticket #{}), after waiting {}", devices,
                                          r.lease->ticket, JobDurationText(r.lease->waited))});
  }
  rows.push_back({"duration", JobDurationText(r.duration)});
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
      rows.push_back({"", fmt::format("starved {}", JobDurationText(it->second))});
    }
    if (auto it = r.throttled.find(gpu); it != r.throttled.end() && it->second.count() > 0) {
      rows.push_back({"", fmt::format("clocks held down {}", JobDurationText(it->second))});
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
