// µs per round of reading every GPU, the sampler's two ways: inline on one
// thread (ReadGpu for each GPU in turn, as before issue 13) and through
// DeviceReaders (the sampler's way for live GPUs: one reader thread). The
// same backend, fields and processes; rounds alternate between the two in
// blocks so drift hits both. Usage: readers_bench ROUNDS
// (GPUWATCH_NVML_LIBRARY / GPUWATCH_FAKE_SCENARIO pick the GPUs).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "backends/nvml/nvml_backend.h"
#include "sampler/device_readers.h"

int main(int argc, char** argv) {
  using namespace gpuwatch;
  using Clock = std::chrono::steady_clock;
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 1000;
  nvml::NvmlOptions options;
  if (const char* lib = std::getenv("GPUWATCH_NVML_LIBRARY")) options.library_path = lib;
  auto opened = nvml::NvmlBackend::Open(options);
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.error().message().c_str());
    return 1;
  }
  std::shared_ptr<Backend> backend = std::move(*opened);
  const int n = backend->DeviceCount();
  const FieldMask fields =
      FieldsWithCadence({Cadence::kInterval, Cadence::kEvents, Cadence::kBuffers});
  const std::vector<FieldMask> masks(static_cast<std::size_t>(n), fields);
  std::vector<DeviceSample> devices(static_cast<std::size_t>(n));
  std::vector<std::vector<DeviceSample>> mig(static_cast<std::size_t>(n));
  DeviceReaders readers(backend, n, /*processes=*/true);
  const auto inline_round = [&] {
    for (int i = 0; i < n; ++i) {
      ReadGpu(*backend, i, fields, &fields, true, devices[static_cast<std::size_t>(i)],
              mig[static_cast<std::size_t>(i)]);
    }
  };
  const auto readers_round = [&] {
    readers.Read(masks, fields, Clock::now() + std::chrono::seconds(10), {});
  };
  for (int i = 0; i < 20; ++i) {  // warm-up: caches, unsupported probes, threads
    inline_round();
    readers_round();
  }
  // Wall time per round, and the CPU time of the whole process (every thread).
  double inline_us = 0, readers_us = 0, inline_cpu_us = 0, readers_cpu_us = 0;
  const auto cpu_us = [] { return 1e6 * static_cast<double>(std::clock()) / CLOCKS_PER_SEC; };
  const int block = 50;
  for (int done = 0; done < rounds; done += block) {
    const int k = std::min(block, rounds - done);
    auto t0 = Clock::now();
    double c0 = cpu_us();
    for (int i = 0; i < k; ++i) inline_round();
    inline_us += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    inline_cpu_us += cpu_us() - c0;
    t0 = Clock::now();
    c0 = cpu_us();
    for (int i = 0; i < k; ++i) readers_round();
    readers_us += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    readers_cpu_us += cpu_us() - c0;
  }
  std::printf(
      "gpus=%d rounds=%d wall_us_per_round inline=%.2f readers=%.2f ratio=%.3f "
      "cpu_us_per_round inline=%.2f readers=%.2f ratio=%.3f\n",
      n, rounds, inline_us / rounds, readers_us / rounds, readers_us / inline_us,
      inline_cpu_us / rounds, readers_cpu_us / rounds, readers_cpu_us / inline_cpu_us);
  return 0;
}
