#include "leak_cases.h"

namespace gpuwatch::leaks::eval {
namespace {

constexpr double kMinute = 60;
constexpr double kHour = 3600;

// `count` episodes of `length_s`, the first at first_s, then every period_s.
std::vector<Episode> Every(double first_s, double period_s, double length_s, int count) {
  std::vector<Episode> out;
  for (int i = 0; i < count; ++i) {
    const double start = first_s + i * period_s;
    out.push_back({start, start + length_s});
  }
  return out;
}

std::vector<LeakCase> Leaks() {
  return {
      {.name = "leak_urgent",
       .what = "5.6 GiB/min from an 11 GiB start, inference server beside it",
       .duration_s = 16 * kMinute,
       .leaking_pid = 51001,
       .leak_start_s = 0,
       .true_rate_mib_per_min = 5.6 * 1024,
       .cycle_s = 0.613},
      {.name = "leak_fills_10min",
       .what = "10 GiB/min from 5 min, fills the GPU in ~10 min",
       .duration_s = 13 * kMinute,
       .leaking_pid = 52001,
       .leak_start_s = 5 * kMinute,
       .true_rate_mib_per_min = 10 * 1024,
       .cycle_s = 2.31},
      {.name = "leak_after_warmup",
       .what = "0.4 GiB/min from 30 s, after a 20 GiB allocator fill",
       .duration_s = 60 * kMinute,
       .leaking_pid = 53001,
       .leak_start_s = 30,
       .true_rate_mib_per_min = 0.4 * 1024,
       .growth = {{0, 30}},
       .cycle_s = 0.871},
      {.name = "leak_50mib",
       .what = "50 MiB/min under a 6 GiB sawtooth, second job beside it",
       .duration_s = 90 * kMinute,
       .leaking_pid = 54001,
       .leak_start_s = 0,
       .true_rate_mib_per_min = 50,
       .cycle_s = 2.53},
      {.name = "leak_1mib_quiet",
       .what = "1 MiB/min under +-8 MiB of noise (inference server)",
       .duration_s = 90 * kMinute,
       .leaking_pid = 55001,
       .leak_start_s = 0,
       .true_rate_mib_per_min = 1},
      {.name = "leak_per_step",
       .what = "8 MiB per 0.523 s step under a 5 GiB step sawtooth",
       .duration_s = 30 * kMinute,
       .leaking_pid = 56001,
       .leak_start_s = 0,
       .true_rate_mib_per_min = 8 * 60 / 0.523,
       .cycle_s = 0.523},
      {.name = "leak_late",
       .what = "200 MiB/min from 40 min, after warm-up and quiet training",
       .duration_s = 2 * kHour,
       .leaking_pid = 57001,
       .leak_start_s = 40 * kMinute,
       .true_rate_mib_per_min = 200,
       .growth = {{0, 60}},
       .cycle_s = 4.13},
      {.name = "leak_rate_rising",
       .what = "100 MiB/min, then 2 GiB/min from 50 min",
       .duration_s = 90 * kMinute,
       .leaking_pid = 58001,
       .leak_start_s = 0,
       .true_rate_mib_per_min = 100,
       .rate_changes = {{50 * kMinute, 2048}},
       .cycle_s = 1.23},
      {.name = "leak_stepwise_fast",
       .what = "+2 GiB every 2 min from 10 min (1 GiB/min)",
       .duration_s = 50 * kMinute,
       .leaking_pid = 59001,
       .leak_start_s = 10 * kMinute,
       .true_rate_mib_per_min = 1024,
       .cycle_s = 1.31},
      {.name = "leak_two_procs",
       .what = "300 MiB/min on one pid, 20 -> 50 GiB sawtooth on the other",
       .duration_s = 60 * kMinute,
       .leaking_pid = 60001,
       .leak_start_s = 0,
       .true_rate_mib_per_min = 300,
       .cycle_s = 7.03},
      {.name = "leak_empty_cache",
       .what = "150 MiB/min under an empty_cache sawtooth (24 GiB every 5.2 s)",
       .duration_s = 90 * kMinute,
       .leaking_pid = 61001,
       .leak_start_s = 0,
       .true_rate_mib_per_min = 150,
       .cycle_s = 5.23},
      {.name = "leak_eval_spikes",
       .what = "120 MiB/min under +30 GiB evaluation phases every 15 min",
       .duration_s = 90 * kMinute,
       .leaking_pid = 62001,
       .leak_start_s = 0,
       .true_rate_mib_per_min = 120,
       .growth = Every(15 * kMinute, 15 * kMinute, 20, 5),
       .cycle_s = 1.73},
      {.name = "leak_after_eval",
       .what = "5 GiB/min from 15 min, 2.5 min after a +40 GiB evaluation phase",
       .duration_s = 30 * kMinute,
       .leaking_pid = 77002,
       .leak_start_s = 15 * kMinute,
       .true_rate_mib_per_min = 5120,
       .growth = {{600, 630}},
       .cycle_s = 1.43},
      // Recorded on an NVIDIA H200 (tests/gpu/run_issue12_h200.sh, torch 2.11):
      // four jobs of tests/gpu/leak_jobs.py on one GPU under a default
      // `gpuwatch watch --jsonl`, 1 s samples; each case keeps one of the two
      // leaking pids and takes the other's memory out of the device's figures
      // (as if it had not run; the recording's own events are left out).
      {.name = "h200_leak_fast",
       .what = "H200: 48 MiB a 0.5 s step (5.6 GiB/min) beside a 60 s cache warm-up and an "
               "empty_cache sawtooth",
       .source = CaseSource::kRecording,
       .duration_s = 259,
       .leaking_pid = 1154,
       .leak_start_s = 14.9,
       .true_rate_mib_per_min = 48 * 120,
       .growth = {{0, 73}},
       .cycle_s = 5},
      {.name = "h200_leak_late",
       .what = "H200: 16 MiB a 0.5 s step (1.9 GiB/min) from 30 s, beside the same jobs",
       .source = CaseSource::kRecording,
       .duration_s = 259,
       .leaking_pid = 1147,
       .leak_start_s = 42.9,
       .true_rate_mib_per_min = 16 * 120,
       .growth = {{0, 73}},
       .cycle_s = 5},
      {.name = "leak_linear",
       .what = "100 MiB/min under a 3 GiB sawtooth, healthy pid beside it",
       .duration_s = 4 * kHour,
       .leaking_pid = 41101,
       .leak_start_s = 0,
       .true_rate_mib_per_min = 100,
       .cycle_s = 83},
      {.name = "leak_slow",
       .what = "1 MiB/min under a 768 MiB sawtooth, 30 s samples",
       .interval_s = 30,
       .duration_s = 6 * kHour,
       .leaking_pid = 42001,
       .leak_start_s = 0,
       .true_rate_mib_per_min = 1,
       .cycle_s = 47,
       .max_warning_delay_s = 3 * kHour,
       .note = "30 s samples: 45 min of it (45 MiB) hide in ~150 MiB of floor jitter; "
               "ceiling 3 h"},
      {.name = "leak_stepwise",
       .what = "+1 GiB every 15 min from 30 min",
       .duration_s = 5 * kHour,
       .leaking_pid = 43001,
       .leak_start_s = 30 * kMinute,
       .true_rate_mib_per_min = 1024.0 / 15,
       .growth = {{0, 240}},
       .cycle_s = 71},
      {.name = "leak_bursty",
       .what = "24 irregular bursts of 128-1024 MiB from 20 min",
       .duration_s = 5 * kHour,
       .leaking_pid = 44001,
       .leak_start_s = 20 * kMinute,
       .true_rate_mib_per_min = 45.2,
       .cycle_s = 59},
  };
}

std::vector<LeakCase> QuietWork() {
  return {
      {.name = "quiet_sawtooth",
       .what = "step sawtooth 30 -> 60 GiB, 97 s steps",
       .duration_s = 6 * kHour,
       .cycle_s = 97},
      {.name = "quiet_sawtooth_subsecond",
       .what = "step sawtooth 48 -> 58 GiB, 0.37 s steps, inference server beside it",
       .cycle_s = 0.373},
      {.name = "quiet_sawtooth_seconds",
       .what = "step sawtooth 34 -> 71 GiB, 4.6 s steps",
       .cycle_s = 4.63},
      {.name = "quiet_empty_cache",
       .what = "cache climbs 26 GiB, empty_cache to a 9 GiB floor every 5.3 s",
       .cycle_s = 5.33},
      {.name = "quiet_grad_accumulation",
       .what = "gradient accumulation: 44 -> 62 GiB over each 75 s cycle",
       .cycle_s = 75},
      {.name = "quiet_allocator_warmup",
       .what = "allocator warm-up 8 -> 31.6 GiB in shrinking steps over 4 min",
       .growth = {{0, 240}},
       .cycle_s = 0.91},
      {.name = "quiet_caching_allocator",
       .what = "caching allocator fills 70 GiB in 3 min, +1 GiB at 50 min",
       .duration_s = 4 * kHour,
       .growth = {{0, 170}, {3000, 3000}},
       .cycle_s = 37},
      {.name = "quiet_allocator_fill",
       .what = "allocator fills 6 GiB/min for 4 min, second job beside it",
       .growth = {{0, 240}},
       .cycle_s = 6.23},
      {.name = "quiet_allocator_burst",
       .what = "new job at 90 s takes 20 GiB in 1 min beside a running one",
       .growth = {{90, 150}},
       .cycle_s = 3.31},
      {.name = "quiet_cache_warm_60s",
       .what = "graph / compile cache warms 36 GiB in 60 s, then flat",
       .growth = {{0, 60}},
       .cycle_s = 0.83},
      {.name = "quiet_warmup_plateau",
       .what = "slow warm-up 10 -> 30 GiB over 20 min, then flat",
       .duration_s = 4 * kHour,
       .growth = {{0, 1200}},
       .cycle_s = 89},
      {.name = "quiet_steps_stop",
       .what = "4 steps of 4 GiB in the first 21 min, then flat",
       .duration_s = 5 * kHour,
       .growth = {{180, 1260}},
       .cycle_s = 79},
      {.name = "quiet_one_step",
       .what = "warm-up to 30 GiB, flat, one +1 GiB step at 30 min that stays",
       .duration_s = 5 * kHour,
       .growth = {{0, 240}, {1800, 1800}},
       .cycle_s = 71},
      {.name = "quiet_second_process",
       .what = "second job starts at 40 min, warms up 25 GiB in 3 min",
       .growth = {{40 * kMinute, 40 * kMinute + 180}},
       .cycle_s = 3.13},
      {.name = "quiet_eval_spikes",
       .what = "+8 GiB evaluation spike for 1 min every 10 min",
       .duration_s = 4 * kHour - 5 * kMinute,
       .growth = Every(10 * kMinute, 10 * kMinute, 0, 23),
       .cycle_s = 67},
      {.name = "quiet_eval_phases",
       .what = "+40 GiB evaluation phase for 2.5 min every 20 min",
       .growth = Every(10 * kMinute, 20 * kMinute, 30, 6),
       .cycle_s = 1.43},
      {.name = "quiet_checkpoint_spikes",
       .what = "+18 GiB checkpoint gather for 36 s every 20 min",
       .growth = Every(20 * kMinute, 20 * kMinute, 4, 5),
       .cycle_s = 2.23},
      {.name = "quiet_noise_only", .what = "flat 41 GiB, +-256 MiB of noise"},
  };
}

}  // namespace

double LeakCase::RateAt(double t_s) const {
  if (!leak_start_s || t_s < *leak_start_s) return 0;
  double rate = true_rate_mib_per_min;
  for (const RateChange& c : rate_changes) {
    if (t_s >= c.at_s) rate = c.mib_per_min;
  }
  return rate;
}

std::string LeakCase::FileName() const {
  return name + (source == CaseSource::kRecording ? ".jsonl" : ".yaml");
}

const std::vector<LeakCase>& AllCases() {
  static const std::vector<LeakCase> kCases = [] {
    std::vector<LeakCase> all = Leaks();
    for (LeakCase& c : QuietWork()) all.push_back(std::move(c));
    return all;
  }();
  return kCases;
}

const LeakCase* FindCase(const std::string& name) {
  for (const LeakCase& c : AllCases()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace gpuwatch::leaks::eval
