#include "engine/sweep_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpuwatch::engine {
namespace {

using Mode = sweep::SweepResult::Mode;

std::vector<sweep::Trial> Trials(const std::vector<sweep::RunRecord>& runs) {
  std::vector<sweep::Trial> out;
  for (const auto& r : runs) out.push_back({r.value, r.verdict});
  return out;
}

// The memory a run measured: with `needed` (every fitted run reported it),
// what it needs (sweep::NeededBytes); else its processes' NVML memory, else (a
// container where NVML lists no process) the device's growth over what was in use.
double MeasuredBytes(const sweep::RunRecord& r, const sweep::SweepResult& s, bool needed) {
  if (needed) return *r.PeakNeededBytes();
  if (r.PeakProcessBytes() > 0) return r.PeakProcessBytes();
  return std::max(0.0, r.peak_device_bytes - (s.total_bytes - s.free_bytes));
}

}  // namespace

void Conclude(const SweepPlan& plan, sweep::SweepResult& s) {
  if (plan.mode == Mode::kConcurrency) {
    std::vector<sweep::ConcurrencyLevel> levels;
    for (const auto& r : s.runs) {
      sweep::ConcurrencyLevel l;
      l.copies = r.copies;
      l.oom = r.verdict == sweep::RunVerdict::kOom;
      l.failed = r.verdict == sweep::RunVerdict::kFailed;
      for (const auto& c : r.copy) l.per_copy_throughput.push_back(c.throughput.value_or(0));
      l.total_throughput = r.TotalThroughput();
      l.peak_device_bytes = r.peak_device_bytes;
      levels.push_back(l);
    }
    s.holds = sweep::JudgeConcurrency(levels);
    return;
  }
  // A run that filled the GPU (its device peak within 5 % of the total) says
  // what the GPU holds, not what the job needs: a caching allocator under
  // pressure frees its cache and retries instead of failing, so its memory
  // stops growing with the batch (a ResNet-50 on the H200 held 136.0 GiB at
  // bs 2968 and at 3068). Such runs are left out of the fit while 2 values
  // or more remain.
  //
  // What is fitted is what a run needs where every run that fits says it
  // (sweep::NeededBytes): NVML's memory holds the allocator's cache, which
  // it frees before it fails (ResNet-50 on the H200: reserved 9-12 % over
  // allocated at small batches, nothing at the edge), so fitting NVML's
  // memory predicts 10 % short of the boundary.
  std::vector<const sweep::RunRecord*> fitted, filled;
  for (const auto& r : s.runs) {
    if (r.verdict != sweep::RunVerdict::kFits) continue;
    const bool full = s.total_bytes > 0 && r.peak_device_bytes >= 0.95 * s.total_bytes;
    (full ? filled : fitted).push_back(&r);
  }
  std::set<long> values;
  for (const auto* r : fitted) values.insert(r->value);
  if (values.size() < 2) fitted.insert(fitted.end(), filled.begin(), filled.end());
  s.fit_of_needed =
      !fitted.empty() && std::all_of(fitted.begin(), fitted.end(), [](const sweep::RunRecord* r) {
        return r->PeakProcessBytes() > 0 && r->PeakNeededBytes().has_value();
      });
  std::vector<sweep::MemoryPoint> points;
  for (const auto* r : fitted) {
    points.push_back({static_cast<double>(r->value), MeasuredBytes(*r, s, s.fit_of_needed)});
  }
  auto fit = sweep::FitMemory(points);
  if (fit) {
    s.fit = *fit;
    s.capacity = sweep::LargestFitting(*fit, s.free_bytes, plan.margin, plan.max_value);
  } else {
    s.fit_note = fit.error().message();
  }
  if (plan.mode == Mode::kSearch || plan.mode == Mode::kBisect || plan.mode == Mode::kUntilOom) {
    s.boundary = sweep::BoundaryOf(Trials(s.runs));
    if (plan.mode == Mode::kSearch && s.boundary->found() && !plan.values.empty()) {
      s.doubling_trials =
          sweep::DoublingBisectionTrials(plan.values.front(), *s.boundary->largest_fit);
    }
    if (plan.mode == Mode::kUntilOom && !plan.values.empty()) s.configured = plan.values.front();
  }
}

sweep::SweepResult RunSweep(SweepRunner& runner, const SweepPlan& plan, const SweepHooks& hooks) {
  sweep::SweepResult s;
  s.mode = plan.mode;
  s.total_bytes = runner.total_bytes();
  s.free_bytes = runner.free_bytes();
  s.gpu_name = runner.gpu_name();
  s.margin = plan.margin;
  // One run; false when the sweep must stop (a failure, a signal).
  const auto run = [&](long value, int copies) {
    if (hooks.starting) hooks.starting(value, copies);
    s.runs.push_back(runner.Run(value, copies, hooks.stop));
    const sweep::RunRecord& r = s.runs.back();
    if (hooks.progress) hooks.progress(r);
    if (runner.interrupted() != 0) {
      s.stopped = fmt::format("interrupted by signal {}", runner.interrupted());
      return false;
    }
    if (r.verdict == sweep::RunVerdict::kFailed) {
      s.stopped = fmt::format(
          "{} failed for another reason than memory: {}",
          r.copies > 1 ? fmt::format("{} copies", r.copies) : fmt::format("the run at {}", r.value),
          r.reason);
      return false;
    }
    return true;
  };
  if (plan.mode == Mode::kConcurrency) {
    const long value = plan.values.empty() ? 0 : plan.values.front();
    for (int copies : plan.concurrency) {
      if (!run(value, copies)) break;
      if (s.runs.back().verdict == sweep::RunVerdict::kOom) break;  // more copies need more
    }
    Conclude(plan, s);
    return s;
  }
  // The fit's largest value under all free memory, from the runs so far.
  const auto predicted = [&]() -> std::optional<long> {
    sweep::SweepResult probe = s;
    SweepPlan at_capacity = plan;
    at_capacity.margin = 0;  // the boundary is where memory runs out
    Conclude(at_capacity, probe);
    return probe.capacity ? probe.capacity->largest : std::optional<long>();
  };
  const auto ran_out = [&] { return sweep::BoundaryOf(Trials(s.runs)).smallest_oom.has_value(); };
  const bool searching = plan.mode == Mode::kSearch || plan.mode == Mode::kBisect;
  bool go_on = true;
  for (long v : plan.values) {
    if (!(go_on = run(v, 1))) break;
    // Larger values need more memory: after an out-of-memory only --search
    // and --bisect go on, below it.
    if (s.runs.back().verdict == sweep::RunVerdict::kOom && !searching) break;
  }
  // The placed runs go up from the last value; once one ran out of memory
  // the ceiling is known and there is nothing to place.
  for (int i = 0; go_on && i < plan.placed && !s.runs.empty() && !ran_out(); ++i) {
    const long v = sweep::PlacedValue(s.runs.back().value, predicted(), i, plan.max_value);
    if (v <= s.runs.back().value) break;  // at --max-value
    go_on = run(v, 1);
  }
  const std::size_t given = s.runs.size();
  while (go_on && (searching || plan.mode == Mode::kUntilOom) &&
         static_cast<int>(s.runs.size()) < plan.max_trials) {
    // --bisect consults no fit: without a prediction the search doubles,
    // then bisects.
    const std::optional<long> next =
        plan.mode == Mode::kUntilOom
            ? sweep::NextUntilOom(Trials(s.runs), plan.max_value)
            : sweep::NextSearchValue(Trials(s.runs),
                                     plan.mode == Mode::kSearch ? predicted() : std::nullopt,
                                     plan.max_value, given);
    if (!next) break;
    go_on = run(*next, 1);
  }
  if (go_on && static_cast<int>(s.runs.size()) >= plan.max_trials && plan.mode != Mode::kValues &&
      !sweep::BoundaryOf(Trials(s.runs)).found()) {
    s.stopped = fmt::format("--max-trials {} reached", plan.max_trials);
  }
  Conclude(plan, s);
  return s;
}

}  // namespace gpuwatch::engine
