#include "report/report_recorder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuwatch::report {
namespace {

using nlohmann::json;

double Seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

std::string_view AnnotationKind(Event::Kind k) {
  switch (k) {
    case Event::Kind::kAlertFiring:
      return "alert";
    case Event::Kind::kAlertResolved:
      return "alert_resolved";
    case Event::Kind::kLeakSuspected:
    case Event::Kind::kLeakUpdated:
      return "leak";
    case Event::Kind::kLeakCleared:
      return "leak_cleared";
    case Event::Kind::kOomForecast:
      return "oom_forecast";
    case Event::Kind::kOomForecastCleared:
      return "oom_forecast_cleared";
    case Event::Kind::kDiagnosis:
      return "diagnosis";
    case Event::Kind::kDeviceLost:
    case Event::Kind::kDeviceStale:
    case Event::Kind::kDeviceBack:
      return "device";
    case Event::Kind::kProcessStarted:
    case Event::Kind::kProcessEnded:
      return "process";
    case Event::Kind::kMark:
      return "mark";
  }
  return "event";
}

std::optional<double> Number(const Reading& r) {
  if (r.is_number() && std::isfinite(r.number())) return r.number();
  return std::nullopt;
}

}  // namespace

void ReportRecorder::Agg::Add(double v) {
  max = count == 0 ? v : std::max(max, v);
  sum += v;
  ++count;
}

void ReportRecorder::Agg::Merge(const Agg& o) {
  if (o.count == 0) return;
  max = count == 0 ? o.max : std::max(max, o.max);
  sum += o.sum;
  count += o.count;
}

void ReportRecorder::Bucket::Merge(const Bucket& o) {
  for (const auto& [gpu, d] : o.devices) {
    DeviceAgg& mine = devices[gpu];
    mine.memory.Merge(d.memory);
    mine.utilization.Merge(d.utilization);
    mine.power.Merge(d.power);
    mine.temperature.Merge(d.temperature);
  }
  for (const auto& [slot, a] : o.processes) processes[slot].Merge(a);
  for (const auto& [slot, a] : o.framework) framework[slot].Merge(a);
}

ReportRecorder::ReportRecorder(ReportOptions options) : options_(options) {
  options_.max_points = std::max<std::size_t>(options_.max_points, 4);
}

ReportRecorder::Bucket& ReportRecorder::BucketAt(double t) {
  if (!origin_) origin_ = t;
  if (!buckets_.empty()) {
    Bucket& last = buckets_.back();
    // Samples arrive in time order; a late one joins the newest bucket.
    if (t <= last.t) return last;
    if (width_s_ > 0 &&
        std::floor((t - *origin_) / width_s_) == std::floor((last.t - *origin_) / width_s_)) {
      return last;
    }
  }
  buckets_.push_back(Bucket{});
  buckets_.back().t = t;
  if (buckets_.size() > options_.max_points) {
    Compact();
  }
  return buckets_.back();
}

void ReportRecorder::Compact() {
  // The first compaction picks a width that halves the count; later ones double it.
  const double span = buckets_.back().t - *origin_;
  width_s_ = width_s_ > 0 ? width_s_ * 2
                          : std::max(span / static_cast<double>(options_.max_points / 2), 1e-3);
  std::vector<Bucket> merged;
  merged.reserve(buckets_.size() / 2 + 1);
  for (auto& b : buckets_) {
    if (!merged.empty() && std::floor((b.t - *origin_) / width_s_) ==
                               std::floor((merged.back().t - *origin_) / width_s_)) {
      merged.back().Merge(b);
    } else {
      merged.push_back(std::move(b));
    }
  }
  buckets_ = std::move(merged);
}

void ReportRecorder::Observe(const Snapshot& s, const std::set<std::uint32_t>* job) {
  if (s.stale) return;  // the watchdog's re-publication: nothing new
  Bucket& b = BucketAt(Seconds(s.time));
  for (const auto& d : s.devices) {
    DeviceInfo& info = devices_[d.index];
    if (info.name.empty() && d.fields[FieldId::kName].is_text())
      info.name = d.fields[FieldId::kName].text();
    if (info.uuid.empty() && d.fields[FieldId::kUuid].is_text())
      info.uuid = d.fields[FieldId::kUuid].text();
    if (auto total = Number(d.fields[FieldId::kMemoryTotalBytes])) info.total = total;
    if (d.health != DeviceHealth::kOk) continue;  // a gap, not a zero
    DeviceAgg& agg = b.devices[d.index];
    if (auto v = Number(d.fields[FieldId::kMemoryUsedBytes])) agg.memory.Add(*v);
    if (auto v = Number(d.fields[FieldId::kUtilizationGpuRatio])) agg.utilization.Add(*v * 100);
    if (auto v = Number(d.fields[FieldId::kPowerDrawWatts])) agg.power.Add(*v);
    if (auto v = Number(d.fields[FieldId::kTemperatureGpuCelsius])) agg.temperature.Add(*v);
    for (const auto& p : d.processes) {
      const auto key = std::make_pair(d.index, ProcessKey{p.pid, p.host.start_ticks});
      auto [it, fresh] = process_slots_.try_emplace(key, processes_.size());
      if (fresh) {
        ProcessInfo pi;
        pi.gpu = d.index;
        pi.key = key.second;
        pi.command = p.host.command.empty() ? p.host.name : p.host.command;
        pi.user = p.host.user;
        processes_.push_back(std::move(pi));
      }
      ProcessInfo& pi = processes_[it->second];
      if (job != nullptr && job->count(p.pid) != 0) pi.job = true;
      if (auto v = Number(p.fields[FieldId::kProcessUsedMemoryBytes])) {
        b.processes[it->second].Add(*v);
        pi.peak = std::max(pi.peak, *v);
      }
    }
  }
}

void ReportRecorder::AddFramework(std::chrono::system_clock::time_point time, int gpu,
                                  const std::string& framework,
                                  const std::map<std::string, double, std::less<>>& bytes) {
  if (bytes.empty()) return;
  // Reports come between samples: they join the newest sample's bucket
  // rather than open one of their own (which would leave gaps in the GPUs'
  // series).
  Bucket& b = buckets_.empty() ? BucketAt(Seconds(time)) : buckets_.back();
  for (const auto& [kind, value] : bytes) {
    if (!std::isfinite(value)) continue;
    auto [it, fresh] =
        framework_slots_.try_emplace(std::make_tuple(gpu, framework, kind), framework_.size());
    if (fresh) framework_.push_back({gpu, framework, kind});
    b.framework[it->second].Add(value);
  }
}

void ReportRecorder::AddEvent(const Event& e) {
  if (e.kind == Event::Kind::kMark && e.source == "step" &&
      ++step_marks_ > options_.max_step_marks) {
    return;  // counted; drawn only when few (ToJson drops them all then)
  }
  if (annotations_.size() >= options_.max_annotations) {
    ++annotations_dropped_;
    return;
  }
  annotations_.push_back(e);
}

json ReportRecorder::ToJson(const ReportMeta& meta, const std::vector<SummaryRow>& summary,
                            const json& job) const {
  json devices = json::array();
  for (const auto& [index, info] : devices_) {
    devices.push_back({{"index", index},
                       {"name", info.name},
                       {"uuid", info.uuid},
                       {"memory_total_bytes", info.total ? json(*info.total) : json(nullptr)}});
  }
  auto value = [](const Agg* a, bool mean) -> json {
    if (a == nullptr || a->count == 0) return nullptr;
    return mean ? a->sum / a->count : a->max;
  };
  json t = json::array();
  for (const auto& b : buckets_) t.push_back(b.t);

  json device_series = json::array();
  for (const auto& [index, info] : devices_) {
    json mem = json::array(), util = json::array(), power = json::array(), temp = json::array();
    for (const auto& b : buckets_) {
      auto it = b.devices.find(index);
      const DeviceAgg* d = it == b.devices.end() ? nullptr : &it->second;
      mem.push_back(value(d ? &d->memory : nullptr, false));
      util.push_back(value(d ? &d->utilization : nullptr, true));
      power.push_back(value(d ? &d->power : nullptr, true));
      temp.push_back(value(d ? &d->temperature : nullptr, false));
    }
    device_series.push_back({{"index", index},
                             {"memory_used_bytes", std::move(mem)},
                             {"utilization_percent", std::move(util)},
                             {"power_watts", std::move(power)},
                             {"temperature_celsius", std::move(temp)}});
  }

  // The job's processes first, then the others by peak memory.
  std::vector<std::size_t> order(processes_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
    if (processes_[a].job != processes_[b].job) return processes_[a].job;
    return processes_[a].peak > processes_[b].peak;
  });
  const std::size_t charted = std::min(order.size(), options_.max_processes);
  json process_series = json::array();
  for (std::size_t k = 0; k < charted; ++k) {
    const ProcessInfo& p = processes_[order[k]];
    json mem = json::array();
    for (const auto& b : buckets_) {
      auto it = b.processes.find(order[k]);
      mem.push_back(value(it == b.processes.end() ? nullptr : &it->second, false));
    }
    process_series.push_back({{"gpu", p.gpu},
                              {"pid", p.key.pid},
                              {"command", p.command.substr(0, 200)},
                              {"user", p.user},
                              {"job", p.job},
                              {"memory_bytes", std::move(mem)}});
  }
  json framework_series = json::array();
  for (std::size_t slot = 0; slot < framework_.size(); ++slot) {
    // A report holds until the next one: the training loop sends them every
    // few steps, not every sample.
    json mem = json::array();
    json held = nullptr;
    for (const auto& b : buckets_) {
      auto it = b.framework.find(slot);
      if (it != b.framework.end()) held = value(&it->second, false);
      mem.push_back(held);
    }
    framework_series.push_back({{"gpu", framework_[slot].gpu},
                                {"framework", framework_[slot].framework},
                                {"kind", framework_[slot].kind},
                                {"memory_bytes", std::move(mem)}});
  }

  const bool draw_steps = step_marks_ <= options_.max_step_marks;
  json annotations = json::array();
  for (const auto& e : annotations_) {
    if (e.kind == Event::Kind::kMark && e.source == "step" && !draw_steps) continue;
    annotations.push_back({{"t", Seconds(e.time)},
                           {"kind", AnnotationKind(e.kind)},
                           {"severity", SeverityName(e.severity)},
                           {"gpu", e.gpu ? json(*e.gpu) : json(nullptr)},
                           {"text", e.message.empty() ? e.source : e.message}});
  }

  // A continuation row (no label) belongs to the row above: one cell, one
  // line each, so the page can lay rows out in columns.
  json rows = json::array();
  for (const auto& r : summary) {
    if (r.label.empty() && !rows.empty()) {
      rows.back()[1] = rows.back()[1].get<std::string>() + "\n" + r.value;
    } else {
      rows.push_back({r.label, r.value});
    }
  }
  if (charted < processes_.size()) {
    rows.push_back({"not charted",
                    fmt::format("{} more processes (the chart shows the job's and the {} largest)",
                                processes_.size() - charted, options_.max_processes)});
  }
  if (!draw_steps) {
    rows.push_back({"step marks", fmt::format("{} (too many to draw; epochs and phases are drawn)",
                                              step_marks_)});
  }
  if (annotations_dropped_ > 0) {
    rows.push_back({"events", fmt::format("{} more events not drawn (the first {} are)",
                                          annotations_dropped_, options_.max_annotations)});
  }

  json out = {{"schema", kReportSchema},
              {"title", meta.title},
              {"hostname", meta.hostname},
              {"source", meta.source},
              {"demo", meta.demo.empty() ? json(nullptr) : json(meta.demo)},
              {"range",
               {{"start", buckets_.empty() ? json(nullptr) : json(buckets_.front().t)},
                {"end", buckets_.empty() ? json(nullptr) : json(buckets_.back().t)}}},
              {"bucket_seconds", width_s_},
              {"devices", std::move(devices)},
              {"t", std::move(t)},
              {"device_series", std::move(device_series)},
              {"process_series", std::move(process_series)},
              {"framework_series", std::move(framework_series)},
              {"annotations", std::move(annotations)},
              {"summary", std::move(rows)}};
  if (!job.is_null()) out["job"] = job;
  return out;
}

}  // namespace gpuwatch::report
