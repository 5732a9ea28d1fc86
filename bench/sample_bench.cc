// µs per full device sample through gpuwatch's NvmlBackend: what the sampler
// reads every interval (interval and event cadences) plus processes and
// per-process utilization, device 0.
// Compare with bench/nvml_c_loop.c and bench/pynvml_bench.py (same calls),
// run together by tests/gpu/run_on_h200.sh. Usage: sample_bench ITERATIONS
// GPUWATCH_BENCH_NO_STREAMS=1 leaves out the stream probes (sample buffers,
// XID events): the cost they add.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "backends/nvml/nvml_backend.h"

int main(int argc, char** argv) {
  using namespace gpuwatch;
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 1000;
  nvml::NvmlOptions options;
  if (const char* lib = std::getenv("GPUWATCH_NVML_LIBRARY")) options.library_path = lib;
  auto backend = nvml::NvmlBackend::Open(options);
  if (!backend) {
    std::fprintf(stderr, "%s\n", backend.error().message().c_str());
    return 1;
  }
  FieldMask fields = FieldsWithCadence({Cadence::kInterval, Cadence::kEvents, Cadence::kBuffers});
  const bool no_streams = std::getenv("GPUWATCH_BENCH_NO_STREAMS") != nullptr;
  if (no_streams) {
    fields &= ~FieldsWithCadence({Cadence::kEvents, Cadence::kBuffers});
  }
  DeviceSample sample;
  for (int i = 0; i < 20; ++i) (*backend)->ReadDevice(0, fields, true, sample);  // warm-up, caches
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) (*backend)->ReadDevice(0, fields, true, sample);
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
      iterations;
  int ok = 0, total = 0;
  for (const auto& row : Catalogue()) {
    if (row.scope != Scope::kDevice || !Has(fields, row.id)) continue;
    ++total;
    ok += sample.fields[row.id].ok() ? 1 : 0;
  }
  std::printf("gpuwatch_backend%s us_per_sample=%.2f fields_ok=%d/%d processes=%zu iterations=%d\n",
              no_streams ? "_no_streams" : "", us, ok, total, sample.processes.size(), iterations);
  return 0;
}
