// What leak analysis costs as a run goes on: a LeakTracker (one detector per
// GPU and per process) fed one snapshot a second of GPUS GPUs x PROCS
// processes for a simulated HOURS, printing at fixed simulated times the CPU
// per sample since the line before and the heap the tracker holds. The first
// line (the first 70 s) is the reference: a benchmark that measures a daemon
// for a few minutes sees that cost, and every floor scale fills (its spans
// lengthen) over the first hours. Memory shapes, per process:
//   noise  constant + uniform noise of +-10 MiB every sample (the fake
//          fleets' processes: bench/fleet_scenario.py)
//   flat   exactly constant (what NVML shows for most processes)
//   saw    a 2 GiB sawtooth of 71 s on a constant (training steps)
//   rise   noise on a 0.1 MiB/min rise (too slow to warn of)
//   stop   noise on a 1 MiB/min leak that stops after an hour: a verdict,
//          then a flat floor under it until it clears
// Usage: leak_cost [GPUS [PROCS [HOURS [SHAPE]]]]   (default 8 64 3 noise)
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string_view>

#include "analysis/leaks/leak_tracker.h"

namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuwatch;
  using namespace gpuwatch::leaks;
  const int gpus = argc > 1 ? std::atoi(argv[1]) : 8;
  const int procs = argc > 2 ? std::atoi(argv[2]) : 64;
  const double hours = argc > 3 ? std::atof(argv[3]) : 3;
  const std::string_view shape = argc > 4 ? argv[4] : "noise";
  if (gpus < 1 || procs < 0 || !(hours > 0) ||
      (shape != "noise" && shape != "flat" && shape != "saw" && shape != "rise" &&
       shape != "stop")) {
    std::fprintf(stderr, "usage: leak_cost [GPUS [PROCS [HOURS [noise|flat|saw|rise|stop]]]]\n");
    return 2;
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> noise(-10 * kMiB, 10 * kMiB);
  const auto value = [&](int p, double t) {
    const double base = (1 + p % 2) * kGiB;
    if (shape == "flat") return base;
    if (shape == "saw") return base + 2 * kGiB * std::fmod(t + p, 71.0) / 71.0;
    if (shape == "rise") return base + noise(rng) + 0.1 * kMiB * t / 60;
    if (shape == "stop") return base + noise(rng) + kMiB * std::min(t, 3600.0) / 60;
    return base + noise(rng);
  };
  const std::size_t heap_before = mallinfo2().uordblks;
  LeakTracker tracker;
  const double marks_s[] = {70, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 24 * 3600};
  std::size_t next = 0;
  double cpu_before = CpuSeconds(), t_before = 0;
  double reference_us = 0;
  std::printf("%d GPUs x %d processes, shape %s, 1 sample/s\n", gpus, procs,
              std::string(shape).c_str());
  std::printf("%10s %12s %14s %12s %9s\n", "simulated", "series", "us CPU/sample", "heap MiB",
              "verdicts");
  const auto start = std::chrono::system_clock::time_point{} + std::chrono::hours(480000);
  for (long t = 0; t <= static_cast<long>(hours * 3600); ++t) {
    Snapshot s;
    s.time = start + std::chrono::seconds(t);
    for (int g = 0; g < gpus; ++g) {
      DeviceSample d;
      d.index = g;
      d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(141 * kGiB);
      double used = 600 * kMiB;
      for (int p = 0; p < procs; ++p) {
        ProcessSample process;
        process.pid = static_cast<std::uint32_t>(100000 + 1000 * g + p);
        process.host.start_ticks = 5;
        const double v = value(p, static_cast<double>(t));
        process.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(v);
        used += v;
        d.processes.push_back(std::move(process));
      }
      d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(used);
      s.devices.push_back(std::move(d));
    }
    tracker.Observe(s);
    if (next < std::size(marks_s) && static_cast<double>(t) >= marks_s[next]) {
      const double cpu = CpuSeconds();
      const double us = (cpu - cpu_before) / (static_cast<double>(t) - t_before) * 1e6;
      if (next == 0) reference_us = us;
      std::size_t verdicts = 0;  // standing now
      for (const auto& r : tracker.Reports()) verdicts += r.estimate.suspected ? 1 : 0;
      std::printf("%9lds %12zu %14.1f %12.2f %9zu   %.1fx the first line\n", t, tracker.tracked(),
                  us, static_cast<double>(mallinfo2().uordblks - heap_before) / kMiB, verdicts,
                  reference_us > 0 ? us / reference_us : 0.0);
      std::fflush(stdout);
      cpu_before = CpuSeconds();  // counting the verdicts is not the tracker's cost
      t_before = static_cast<double>(t);
      ++next;
    }
  }
  return 0;
}
