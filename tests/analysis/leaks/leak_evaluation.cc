#include "leak_evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <set>

#include "analysis/leaks/leak_tracker.h"
#include "backends/nvml/nvml_backend.h"
#include "backends/replay/replay_backend.h"
#include "export/lines.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::leaks::eval {
namespace {

using Clock = std::chrono::system_clock;

constexpr double kMiBytes = 1024.0 * 1024.0;
constexpr double kPeakWindow_s = 60;  // "used now": the highest sample of the last minute

double BytesPerSecond(double mib_per_min) { return mib_per_min * kMiBytes / 60; }

// The fake's timestamps start at 2026-01-01T00:00:00Z; any origin works here.
Clock::time_point ScenarioTime(double t_s) {
  return Clock::time_point(std::chrono::seconds(1767225600)) +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t_s));
}

// The samples of one case, in time order.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::optional<Snapshot> Next() = 0;
};

// A scenario through NvmlBackend and the fake NVML at frozen times.
class ScenarioSource final : public Source {
 public:
  static Result<std::unique_ptr<Source>> Open(const LeakCase& c, const EvalPaths& paths) {
    const std::string scenario = paths.case_dir + "/" + c.FileName();
    setenv("GPUWATCH_FAKE_SCENARIO", scenario.c_str(), 1);
    setenv("GPUWATCH_FAKE_TIME", "0", 1);
    nvml::NvmlOptions o;
    o.library_path = paths.fake_library;
    auto backend = nvml::NvmlBackend::Open(o);
    if (!backend) return backend.error();
    return std::unique_ptr<Source>(new ScenarioSource(c, std::move(*backend)));
  }

  std::optional<Snapshot> Next() override {
    const double t = static_cast<double>(next_) * interval_s_;
    if (t > duration_s_ + 1e-9) return std::nullopt;
    ++next_;
    setenv("GPUWATCH_FAKE_TIME", fmt::format("{:.3f}", t).c_str(), 1);
    Snapshot s;
    s.time = ScenarioTime(t);
    s.sequence = next_;
    for (int i = 0; i < backend_->DeviceCount(); ++i) {
      DeviceSample d;
      backend_->ReadDevice(i, AllFields(), true, d);
      s.devices.push_back(std::move(d));
    }
    return s;
  }

 private:
  ScenarioSource(const LeakCase& c, std::unique_ptr<nvml::NvmlBackend> backend)
      : interval_s_(c.interval_s), duration_s_(c.duration_s), backend_(std::move(backend)) {}
  const double interval_s_;
  const double duration_s_;
  std::unique_ptr<nvml::NvmlBackend> backend_;
  std::uint64_t next_ = 0;
};

// A recording through ReplayBackend, one sample per read of device 0.
class RecordingSource final : public Source {
 public:
  static Result<std::unique_ptr<Source>> Open(const LeakCase& c, const EvalPaths& paths) {
    replay::ReplayOptions o;
    o.path = paths.case_dir + "/" + c.FileName();
    o.speed = 0;
    auto backend = replay::ReplayBackend::Open(o);
    if (!backend) return backend.error();
    return std::unique_ptr<Source>(new RecordingSource(std::move(*backend)));
  }

  std::optional<Snapshot> Next() override {
    if (done_) return std::nullopt;
    Snapshot s;
    for (int i = 0; i < backend_->DeviceCount(); ++i) {
      DeviceSample d;
      backend_->ReadDevice(i, AllFields(), true, d);
      s.devices.push_back(std::move(d));
    }
    s.time = backend_->SampleTime().value_or(Clock::time_point{});
    s.sequence = ++read_;
    done_ = backend_->Finished();
    return s;
  }

 private:
  explicit RecordingSource(std::unique_ptr<replay::ReplayBackend> backend)
      : backend_(std::move(backend)) {}
  std::unique_ptr<replay::ReplayBackend> backend_;
  std::uint64_t read_ = 0;
  bool done_ = false;
};

Result<std::unique_ptr<Source>> OpenSource(const LeakCase& c, const EvalPaths& paths) {
  if (c.source == CaseSource::kRecording) return RecordingSource::Open(c, paths);
  return ScenarioSource::Open(c, paths);
}

// The seed's rule: alarm once per device and process when used > 1.5 x its
// first sample.
class Baseline {
 public:
  void Observe(const SeriesKey& key, double used, double t_s, std::vector<Alarm>& alarms) {
    auto [it, fresh] = initial_.try_emplace(key, used);
    if (fresh || fired_.contains(key) || used <= 1.5 * it->second) return;
    fired_.insert(key);
    alarms.push_back(Alarm{t_s, key, "used > 1.5 x initial"});
  }

 private:
  std::map<SeriesKey, double> initial_;
  std::set<SeriesKey> fired_;
};

// The highest sample in (t - 60 s, t].
double PeakBefore(const std::vector<Point>& points, double t_s) {
  double peak = 0;
  auto it = std::upper_bound(points.begin(), points.end(), t_s - kPeakWindow_s,
                             [](double t, const Point& p) { return t < p.t_s; });
  for (; it != points.end() && it->t_s <= t_s + 1e-9; ++it) peak = std::max(peak, it->bytes);
  return peak;
}

// Used at t0 for a leak of `rate` starting there: the highest sample within
// 60 s either side, less the leak's growth since t0 (so a leak starting at
// the first sample still sees the top of its sawtooth).
double UsedAround(const std::vector<Point>& points, double t0_s, double rate_bytes_per_s) {
  double used = 0;
  for (const Point& p : points) {
    if (std::fabs(p.t_s - t0_s) >= kPeakWindow_s) continue;
    used = std::max(used, p.bytes - rate_bytes_per_s * std::max(0.0, p.t_s - t0_s));
  }
  return used;
}

std::optional<double> TimeToOomFrom(const LeakCase& c, const Trace& trace, double t0_s) {
  const double rate = BytesPerSecond(c.RateAt(t0_s));
  const auto device = trace.used.find(SeriesKey{c.gpu, std::nullopt});
  const auto total = trace.total_bytes.find(c.gpu);
  if (rate <= 0 || device == trace.used.end() || total == trace.total_bytes.end()) {
    return std::nullopt;
  }
  return (total->second - UsedAround(device->second, t0_s, rate)) / rate;
}

// When a forecast on quiet work raised at r must be cleared by.
double ClearDeadline(const LeakCase& c, double raised_s) {
  double growth_end = -std::numeric_limits<double>::infinity();
  for (const Episode& e : c.growth) {
    if (e.start_s <= raised_s && raised_s <= e.end_s) growth_end = std::max(growth_end, e.end_s);
  }
  return std::max(growth_end, raised_s + c.cycle_s) + kClearWithin_s;
}

bool IsReport(Event::Kind k) {
  return k == Event::Kind::kOomForecast || k == Event::Kind::kLeakSuspected ||
         k == Event::Kind::kLeakUpdated;
}

SeriesKey KeyOf(const Event& e) {
  return SeriesKey{e.gpu.value_or(-1),
                   e.process ? std::optional<std::uint32_t>(e.process->pid) : std::nullopt};
}

}  // namespace

Result<Trace> Replay(const LeakCase& c, const EvalPaths& paths, bool detect) {
  auto source = OpenSource(c, paths);
  if (!source) return source.error();
  LeakTracker tracker;
  Baseline baseline;
  Trace trace;
  std::optional<Clock::time_point> origin;
  auto seconds = [&](Clock::time_point t) {
    return std::chrono::duration<double>(t - *origin).count();
  };
  while (std::optional<Snapshot> s = (*source)->Next()) {
    if (!origin) origin = s->time;
    const double t = seconds(s->time);
    for (const DeviceSample& d : s->devices) {
      if (d.health != DeviceHealth::kOk) continue;
      const Reading& total = d.fields[FieldId::kMemoryTotalBytes];
      if (total.is_number()) trace.total_bytes[d.index] = total.number();
      auto record = [&](const SeriesKey& key, const Reading& used) {
        if (!used.is_number()) return;
        trace.used[key].push_back(Point{t, used.number()});
        baseline.Observe(key, used.number(), t, trace.baseline);
      };
      record(SeriesKey{d.index, std::nullopt}, d.fields[FieldId::kMemoryUsedBytes]);
      for (const ProcessSample& p : d.processes) {
        record(SeriesKey{d.index, p.pid}, p.fields[FieldId::kProcessUsedMemoryBytes]);
      }
    }
    if (detect) {
      for (Event& e : tracker.Observe(*s)) {
        trace.events.push_back(TimedEvent{seconds(e.time), std::move(e)});
      }
    }
    ++trace.samples;
    trace.duration_s = t;
  }
  if (trace.samples == 0) return Status::InvalidArgument(c.name + ": no samples");
  return trace;
}

std::optional<double> TrueTimeToFull(const LeakCase& c, const Trace& trace, double t_s) {
  const double rate = BytesPerSecond(c.RateAt(t_s));
  const auto device = trace.used.find(SeriesKey{c.gpu, std::nullopt});
  const auto total = trace.total_bytes.find(c.gpu);
  if (rate <= 0 || device == trace.used.end() || total == trace.total_bytes.end()) {
    return std::nullopt;
  }
  return (total->second - PeakBefore(device->second, t_s)) / rate;
}

Score ScoreCase(const LeakCase& c, const Trace& trace) {
  Score s;
  const double start = c.leak_start_s.value_or(std::numeric_limits<double>::infinity());
  if (c.is_leak()) {
    s.time_to_oom_s = TimeToOomFrom(c, trace, start);
    if (s.time_to_oom_s) s.budget_s = std::min(0.1 * *s.time_to_oom_s, c.max_warning_delay_s);
    if (!c.rate_changes.empty()) {
      if (auto t = TimeToOomFrom(c, trace, c.rate_changes.back().at_s)) {
        s.change_budget_s = std::min(0.1 * *t, c.max_warning_delay_s);
      }
    }
  }
  auto on_leak = [&](const SeriesKey& k) {
    return c.is_leak() && k.gpu == c.gpu && (!k.pid || k.pid == c.leaking_pid);
  };
  // Just after a rate change the truth jumps: reports in its budget are not
  // judged for their forecast (change_report says whether they caught up).
  auto settling = [&](double t) {
    for (const RateChange& rc : c.rate_changes) {
      if (t >= rc.at_s && t < rc.at_s + s.change_budget_s.value_or(0)) return true;
    }
    return false;
  };
  // While labelled growth that is not the leak goes on (a warm-up beside it),
  // the device's series grows by both: its reports are true, but their rate
  // is not the leak's, so they are not judged for their forecast.
  auto shared = [&](const SeriesKey& k, double t) {
    if (k.pid) return false;
    for (const Episode& g : c.growth) {
      if (t >= g.start_s && t <= g.end_s) return true;
    }
    return false;
  };

  struct Raised {
    double raised_s;
    double deadline_s;
  };
  std::map<SeriesKey, Raised> raised;  // forecasts standing on quiet work
  auto settle = [&](std::map<SeriesKey, Raised>::iterator it, bool standing) {
    if (standing) s.standing_forecasts.push_back(it->second.raised_s);
    raised.erase(it);
  };

  for (const TimedEvent& te : trace.events) {
    const Event& e = te.event;
    const double t = te.t_s;
    const SeriesKey key = KeyOf(e);
    const bool true_report = on_leak(key) && t >= start - 1e-9;
    if (true_report) {
      // A forecast raised on this series before the leak is judged at its start.
      if (auto it = raised.find(key); it != raised.end()) settle(it, it->second.deadline_s < start);
      if (e.kind == Event::Kind::kOomForecastCleared || e.kind == Event::Kind::kLeakCleared) {
        ++s.cleared_during_leak;
      }
      if (!IsReport(e.kind)) continue;
      const auto truth = TrueTimeToFull(c, trace, t);
      std::optional<double> error;
      if (truth && e.time_to_full) {
        error = (static_cast<double>(e.time_to_full->count()) - *truth) / *truth;
      }
      const Report report{t - start, e.kind, error, e.message};
      if (!s.warning && e.kind != Event::Kind::kLeakUpdated) s.warning = report;
      if (!s.verdict && e.kind == Event::Kind::kLeakSuspected) s.verdict = report;
      if (!c.rate_changes.empty() && !s.change_report && t >= c.rate_changes.back().at_s && error &&
          std::fabs(*error) <= kForecastTolerance) {
        s.change_report = report;
        s.change_report->delay_s = t - c.rate_changes.back().at_s;
      }
      if (!settling(t) && !shared(key, t)) {
        ++s.reports;
        if (!error) {
          ++s.reports_without_forecast;
        } else if (!s.worst_forecast_error || std::fabs(*error) > *s.worst_forecast_error) {
          s.worst_forecast_error = std::fabs(*error);
          s.worst = report;
        }
      }
      continue;
    }
    switch (e.kind) {
      case Event::Kind::kLeakSuspected:
        s.false_verdicts.push_back(te);
        break;
      case Event::Kind::kOomForecast:
        if (!raised.contains(key)) {
          ++s.quiet_forecasts;
          raised.emplace(key, Raised{t, ClearDeadline(c, t)});
        }
        break;
      case Event::Kind::kOomForecastCleared:
        if (auto it = raised.find(key); it != raised.end()) settle(it, t > it->second.deadline_s);
        break;
      default:
        break;
    }
  }
  // Still raised at the end: standing, unless the leak took the series over
  // before the forecast's growth was due to end.
  while (!raised.empty()) {
    auto it = raised.begin();
    settle(it, !on_leak(it->first) || it->second.deadline_s < start);
  }

  for (const Alarm& a : trace.baseline) {
    if (on_leak(a.subject) && a.t_s >= start) {
      if (!s.baseline_delay_s) s.baseline_delay_s = a.t_s - start;
    } else {
      ++s.baseline_false_alarms;
    }
  }
  return s;
}

bool Score::warned_in_budget() const {
  return warning && budget_s && warning->delay_s <= *budget_s;
}

std::vector<std::string> Score::Failures() const {
  std::vector<std::string> out;
  if (budget_s) {
    if (!warning) {
      out.push_back("not warned");
    } else if (!warned_in_budget()) {
      out.push_back("warned late");
    }
    if (change_budget_s && (!change_report || change_report->delay_s > *change_budget_s)) {
      out.push_back("rate rise not followed");
    }
    if (worst_forecast_error && *worst_forecast_error > kForecastTolerance) {
      out.push_back(fmt::format("forecast off by {:.0f} %", 100 * *worst_forecast_error));
    }
    if (reports_without_forecast > 0) {
      out.push_back(fmt::format("{} reports without forecast", reports_without_forecast));
    }
  }
  if (!false_verdicts.empty())
    out.push_back(fmt::format("{} false verdicts", false_verdicts.size()));
  if (!standing_forecasts.empty()) {
    out.push_back(fmt::format("{} standing forecasts", standing_forecasts.size()));
  }
  return out;
}

CaseResult RunCase(const LeakCase& c, const EvalPaths& paths) {
  CaseResult r;
  r.leak_case = c;
  Result<Trace> trace = Replay(c, paths);
  if (!trace) {
    r.error = trace.error().message();
    return r;
  }
  r.trace = std::move(*trace);
  r.score = ScoreCase(c, r.trace);
  return r;
}

Status WriteRecording(const LeakCase& c, const EvalPaths& paths, const std::string& path) {
  auto source = ScenarioSource::Open(c, paths);
  if (!source) return source.error();
  std::ofstream out(path);
  if (!out) return Status::NotFound(fmt::format("cannot write {}", path));
  bool first = true;
  while (std::optional<Snapshot> s = (*source)->Next()) {
    if (first) out << JsonlHeader(*s, "leak-eval") << '\n';
    first = false;
    out << JsonlSample(*s) << '\n';
  }
  out.close();
  if (!out) return Status::Internal(fmt::format("writing {} failed", path));
  return Status::Ok();
}

}  // namespace gpuwatch::leaks::eval
