#include "backends/nvml/nvml_processes.h"

#include <algorithm>
#include <map>

#include "backends/nvml/nvml_errors.h"

namespace gpuwatch::nvml {
namespace {

constexpr int kMaxAttempts = 4;

// One list (compute or graphics) through the newest entry point the library has.
template <typename Entry, typename Fn>
nvmlReturn_t CallList(Fn fn, nvmlDevice_t device, std::size_t& capacity,
                      std::vector<Entry>& entries) {
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    entries.resize(capacity);
    unsigned count = static_cast<unsigned>(capacity);
    const nvmlReturn_t rc = fn(device, &count, entries.data());
    if (rc == NVML_SUCCESS) {
      entries.resize(std::min<std::size_t>(count, entries.size()));
      return rc;
    }
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE) return rc;
    // The list grew since the driver counted it: ask for what it said plus room.
    capacity = std::max<std::size_t>(capacity * 2, static_cast<std::size_t>(count) + 8);
  }
  return NVML_ERROR_INSUFFICIENT_SIZE;
}

struct RawProcess {
  unsigned pid;
  unsigned long long used;
  unsigned gi;
  unsigned ci;
};

nvmlReturn_t ReadOneKind(const NvmlLibrary& lib, nvmlDevice_t device, bool graphics,
                         std::size_t& capacity, std::vector<RawProcess>& out) {
  const Api& api = lib.api();
  auto v3 = graphics ? api.nvmlDeviceGetGraphicsRunningProcesses_v3
                     : api.nvmlDeviceGetComputeRunningProcesses_v3;
  auto v2 = graphics ? api.nvmlDeviceGetGraphicsRunningProcesses_v2
                     : api.nvmlDeviceGetComputeRunningProcesses_v2;
  auto v1 = graphics ? api.nvmlDeviceGetGraphicsRunningProcesses
                     : api.nvmlDeviceGetComputeRunningProcesses;
  out.clear();
  if (auto fn = v3 != nullptr ? v3 : v2; fn != nullptr) {
    std::vector<nvmlProcessInfo_t> entries;
    const nvmlReturn_t rc = CallList(fn, device, capacity, entries);
    for (const auto& e : entries)
      out.push_back({e.pid, e.usedGpuMemory, e.gpuInstanceId, e.computeInstanceId});
    return rc;
  }
  if (v1 != nullptr) {
    std::vector<nvmlProcessInfo_v1_t> entries;
    const nvmlReturn_t rc = CallList(v1, device, capacity, entries);
    for (const auto& e : entries) {
      out.push_back({e.pid, e.usedGpuMemory, NVML_INVALID_INSTANCE_ID, NVML_INVALID_INSTANCE_ID});
    }
    return rc;
  }
  return NVML_ERROR_FUNCTION_NOT_FOUND;
}

std::optional<std::uint32_t> InstanceId(unsigned id) {
  if (id == NVML_INVALID_INSTANCE_ID) return std::nullopt;
  return id;
}

}  // namespace

nvmlReturn_t ReadProcessList(const NvmlLibrary& lib, nvmlDevice_t device, std::size_t& capacity,
                             std::vector<ProcessSample>& out) {
  out.clear();
  std::vector<RawProcess> compute, graphics;
  const nvmlReturn_t crc = ReadOneKind(lib, device, false, capacity, compute);
  const nvmlReturn_t grc = ReadOneKind(lib, device, true, capacity, graphics);
  if (crc != NVML_SUCCESS && grc != NVML_SUCCESS) return crc;

  auto add = [&](const RawProcess& raw, ProcessSample::Type type) {
    for (auto& p : out) {
      if (p.pid == raw.pid && p.gpu_instance_id == InstanceId(raw.gi)) {
        p.type = ProcessSample::Type::kComputeAndGraphics;
        return;
      }
    }
    ProcessSample p;
    p.pid = raw.pid;
    p.type = type;
    p.gpu_instance_id = InstanceId(raw.gi);
    p.compute_instance_id = InstanceId(raw.ci);
    p.fields[FieldId::kProcessUsedMemoryBytes] =
        raw.used == NVML_VALUE_NOT_AVAILABLE
            ? Reading::Absent(Missing::kNotSupported, "usedGpuMemory: not available")
            : Reading::Number(static_cast<double>(raw.used));
    out.push_back(std::move(p));
  };
  for (const auto& raw : compute) add(raw, ProcessSample::Type::kCompute);
  for (const auto& raw : graphics) add(raw, ProcessSample::Type::kGraphics);
  return NVML_SUCCESS;
}

void ReadProcessUtilization(const NvmlLibrary& lib, nvmlDevice_t device,
                            unsigned long long& last_seen_us, std::chrono::seconds window,
                            std::vector<ProcessSample>& processes) {
  const FieldId ids[4] = {
      FieldId::kProcessSmUtilizationRatio, FieldId::kProcessMemoryUtilizationRatio,
      FieldId::kProcessEncoderUtilizationRatio, FieldId::kProcessDecoderUtilizationRatio};
  auto mark_all = [&](const Reading& r) {
    for (auto& p : processes) {
      for (FieldId id : ids) p.fields[id] = r;
    }
  };
  auto fn = lib.api().nvmlDeviceGetProcessUtilization;
  if (fn == nullptr) {
    mark_all(MissingSymbol("nvmlDeviceGetProcessUtilization"));
    return;
  }
  if (processes.empty()) return;

  std::vector<nvmlProcessUtilizationSample_t> samples;
  unsigned count = 0;
  nvmlReturn_t rc = fn(device, nullptr, &count, last_seen_us);
  for (int attempt = 0; attempt < kMaxAttempts && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    samples.resize(count + 8);
    count = static_cast<unsigned>(samples.size());
    rc = fn(device, samples.data(), &count, last_seen_us);
  }
  if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_SUCCESS && count == 0)) {
    // No sample newer than the last one: nothing ran since, or too soon.
    mark_all(
        Reading::Absent(Missing::kNotYetSampled, "nvmlDeviceGetProcessUtilization: no new sample"));
    return;
  }
  if (rc != NVML_SUCCESS) {
    mark_all(AbsentFor(lib, "nvmlDeviceGetProcessUtilization", rc));
    return;
  }
  samples.resize(std::min<std::size_t>(count, samples.size()));

  const auto now_us =
      static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  const unsigned long long oldest =
      now_us - static_cast<unsigned long long>(window.count()) * 1'000'000ull;
  // Mean of each pid's fresh samples.
  struct Sum {
    double v[4] = {0, 0, 0, 0};
    int n = 0;
  };
  std::map<unsigned, Sum> sums;
  for (const auto& s : samples) {
    last_seen_us = std::max(last_seen_us, s.timeStamp);
    if (s.timeStamp < oldest) continue;  // stale: from a previous process life or a stuck buffer
    Sum& sum = sums[s.pid];
    sum.v[0] += s.smUtil;
    sum.v[1] += s.memUtil;
    sum.v[2] += s.encUtil;
    sum.v[3] += s.decUtil;
    ++sum.n;
  }
  for (auto& p : processes) {
    auto it = sums.find(p.pid);
    for (int i = 0; i < 4; ++i) {
      p.fields[ids[i]] =
          it == sums.end()
              ? Reading::Absent(Missing::kNotYetSampled,
                                "nvmlDeviceGetProcessUtilization: no recent sample for this pid")
              : Reading::Number(it->second.v[i] / it->second.n / 100.0);
    }
  }
}

}  // namespace gpuwatch::nvml
