// Where the time of a one-shot `gpuwatch query` goes: the same steps it takes
// (load libnvidia-ml, nvmlInit, device handles, host fields, the query's
// fields of every device, nvmlShutdown), each timed, in a fresh process.
// tests/gpu/run_on_h200.sh runs it N times and reports the medians.
// Usage: query_phases [probes [FIELDS] | threads K FIELDS]
//   probes: time each probe's first call (the six slowest; with FIELDS, an
//   nvidia-smi --query-gpu list, every probe behind it);
//   threads K FIELDS: time the first reads of the probes behind FIELDS (an
//   nvidia-smi --query-gpu list) spread over K threads, to see whether the
//   driver answers first reads side by side.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "backends/nvml/nvml_backend.h"
#include "backends/nvml/nvml_library.h"
#include "backends/nvml/nvml_probes.h"
#include "export/smi_format.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The probes behind an nvidia-smi field list (every probe for ""), in the
// order a read makes them; none (and the error said) for a bad list.
std::optional<std::vector<const gpuwatch::nvml::Probe*>> ProbesBehind(std::string_view list) {
  using namespace gpuwatch;
  FieldMask which = AllFields();
  if (!list.empty()) {
    auto columns = smi::ParseGpuFields(list);
    if (!columns) {
      std::fprintf(stderr, "%s\n", columns.error().message().c_str());
      return std::nullopt;
    }
    which.reset();
    for (const auto& c : *columns) {
      if (c.field) Set(which, *c.field);
    }
  }
  std::vector<const nvml::Probe*> wanted;
  for (const auto& probe : nvml::DeviceProbes()) {
    const auto fields = probe.Fields();
    if (std::any_of(fields.begin(), fields.end(), [&](FieldId id) { return Has(which, id); }))
      wanted.push_back(&probe);
  }
  return wanted;
}

// Each probe's first (cold) call in a fresh process, slowest first: the six
// slowest of every probe, or every probe behind `list`.
int ColdProbes(const char* path, std::string_view list) {
  using namespace gpuwatch;
  const auto wanted = ProbesBehind(list);
  if (!wanted) return 2;
  auto lib2 = nvml::NvmlLibrary::Load(path != nullptr ? path : "");
  if (!lib2) return 1;
  (*lib2)->api().nvmlInit_v2();
  nvmlDevice_t dev = nullptr;
  (*lib2)->api().nvmlDeviceGetHandleByIndex_v2(0, &dev);
  std::vector<std::pair<double, std::string_view>> cold;
  DeviceFields scratch;
  nvml::DeviceStreams streams;
  double total = 0;
  for (const nvml::Probe* probe : *wanted) {
    nvml::ProbeContext ctx{**lib2, dev, scratch, streams};
    const auto p0 = Clock::now();
    probe->read(ctx);
    cold.emplace_back(Ms(p0, Clock::now()), probe->call);
    total += cold.back().first;
  }
  nvml::CloseStreams(**lib2, streams);
  std::sort(cold.rbegin(), cold.rend());
  std::printf("cold probes (%zu, %.2fms in all):", cold.size(), total);
  const std::size_t shown = list.empty() ? 6 : cold.size();
  for (std::size_t i = 0; i < shown && i < cold.size(); ++i) {
    std::printf(" %.*s=%.2fms", static_cast<int>(cold[i].second.size()), cold[i].second.data(),
                cold[i].first);
  }
  std::printf("\n");
  return 0;
}

// The probes behind an nvidia-smi field list, read once each on K threads.
int ThreadedReads(const char* path, int threads, std::string_view list) {
  using namespace gpuwatch;
  const auto probes = ProbesBehind(list);
  if (!probes) return 2;
  const std::vector<const nvml::Probe*>& wanted = *probes;
  auto lib = nvml::NvmlLibrary::Load(path != nullptr ? path : "");
  if (!lib) return 1;
  if ((*lib)->api().nvmlInit_v2() != NVML_SUCCESS) return 1;
  nvmlDevice_t dev = nullptr;
  (*lib)->api().nvmlDeviceGetHandleByIndex_v2(0, &dev);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    DeviceFields scratch;
    nvml::DeviceStreams streams;
    for (std::size_t i = next++; i < wanted.size(); i = next++) {
      nvml::ProbeContext ctx{**lib, dev, scratch, streams};
      wanted[i]->read(ctx);
    }
    nvml::CloseStreams(**lib, streams);
  };
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  std::printf("threads=%d probes=%zu reads_ms=%.3f\n", threads, wanted.size(),
              Ms(t0, Clock::now()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuwatch;
  const char* path = std::getenv("GPUWATCH_NVML_LIBRARY");
  if (argc > 1 && std::string_view(argv[1]) == "probes")
    return ColdProbes(path, argc > 2 ? argv[2] : "");
  if (argc > 3 && std::string_view(argv[1]) == "threads")
    return ThreadedReads(path, std::max(1, std::atoi(argv[2])), argv[3]);
  const auto t0 = Clock::now();
  auto lib = nvml::NvmlLibrary::Load(path != nullptr ? path : "");
  if (!lib) {
    std::fprintf(stderr, "%s\n", lib.error().message().c_str());
    return 1;
  }
  const auto t1 = Clock::now();
  const nvml::Api& api = (*lib)->api();
  if (api.nvmlInit_v2() != NVML_SUCCESS) return 1;
  const auto t2 = Clock::now();
  unsigned count = 0;
  api.nvmlDeviceGetCount_v2(&count);
  nvmlDevice_t handle = nullptr;
  for (unsigned i = 0; i < count; ++i) api.nvmlDeviceGetHandleByIndex_v2(i, &handle);
  const auto t3 = Clock::now();
  api.nvmlShutdown();
  const auto t4 = Clock::now();

  // The backend's own path, as `gpuwatch query` runs it (its own init).
  nvml::NvmlOptions options;
  if (path != nullptr) options.library_path = path;
  const auto b0 = Clock::now();
  auto backend = nvml::NvmlBackend::Open(options);
  if (!backend) return 1;
  const auto b1 = Clock::now();
  (void)(*backend)->ReadHost();
  const auto b2 = Clock::now();
  FieldMask fields;
  for (FieldId id : {FieldId::kIndex,
                     FieldId::kUuid,
                     FieldId::kName,
                     FieldId::kSerial,
                     FieldId::kPciBusId,
                     FieldId::kPerformanceState,
                     FieldId::kTemperatureGpuCelsius,
                     FieldId::kTemperatureMemoryCelsius,
                     FieldId::kUtilizationGpuRatio,
                     FieldId::kMemoryUsedBytes,
                     FieldId::kPowerDrawWatts,
                     FieldId::kPowerLimitWatts,
                     FieldId::kPowerLimitEnforcedWatts,
                     FieldId::kClockSmHertz,
                     FieldId::kClockMemoryHertz,
                     FieldId::kClockGraphicsHertz,
                     FieldId::kFanSpeedRatio,
                     FieldId::kComputeMode,
                     FieldId::kPersistenceMode,
                     FieldId::kEccErrorsUncorrectedVolatile,
                     FieldId::kMigMode}) {
    Set(fields, id);
  }
  DeviceSample d;
  for (int i = 0; i < (*backend)->DeviceCount(); ++i) (*backend)->ReadDevice(i, fields, false, d);
  const auto b3 = Clock::now();
  backend->reset();
  const auto b4 = Clock::now();
  std::printf(
      "dlopen_ms=%.2f init_ms=%.2f handles_ms=%.2f shutdown_ms=%.2f | backend_open_ms=%.2f "
      "read_host_ms=%.2f read_fields_ms=%.2f backend_close_ms=%.2f\n",
      Ms(t0, t1), Ms(t1, t2), Ms(t2, t3), Ms(t3, t4), Ms(b0, b1), Ms(b1, b2), Ms(b2, b3),
      Ms(b3, b4));
  return 0;
}
