// Exported NVML entry points: running process lists (v1/_v2/_v3, compute and
// graphics) and per-process utilization samples, with NVML's exact
// buffer-size contract and the process_list_race fault.
#include <vector>

#include "device_model.h"
#include "fake_state.h"
#include "nvml_exports.h"

namespace fake = gpuwatch::fake_nvml;
using fake::CallContext;
using fake::FakeNvml;
using fake::MigHandles;
using fake::ProcessSpec;
using fake::ProcessType;

namespace {

constexpr unsigned kRacePidBase = 99000;  // pids of process_list_race extras
constexpr double kRaceProcessBytes = 256.0 * 1048576.0;

struct Entry {
  unsigned pid;
  unsigned long long used_bytes;
  unsigned gi, ci;
};

std::vector<Entry> ListedProcesses(const CallContext& c, ProcessType type) {
  const fake::DeviceSpec& d = *c.device;
  std::vector<Entry> entries;
  for (const ProcessSpec* p : fake::ActiveProcesses(d, c.now.t, c.mig)) {
    if (p->type != type) continue;
    Entry e{p->pid, fake::ToULL(fake::ProcessMemoryBytes(*p, c.now.t)), NVML_INVALID_INSTANCE_ID,
            NVML_INVALID_INSTANCE_ID};
    if (p->memory_unavailable) e.used_bytes = NVML_VALUE_NOT_AVAILABLE;
    if (d.mig_enabled) {
      e.gi = p->gi.value_or(0);
      e.ci = p->ci.value_or(0);
    }
    entries.push_back(e);
  }
  return entries;
}

void Fill(const Entry& e, nvmlProcessInfo_t& out) {
  out.pid = e.pid;
  out.usedGpuMemory = e.used_bytes;
  out.gpuInstanceId = e.gi;
  out.computeInstanceId = e.ci;
}

void Fill(const Entry& e, nvmlProcessInfo_v1_t& out) {
  out.pid = e.pid;
  out.usedGpuMemory = e.used_bytes;
}

// On INSUFFICIENT_SIZE, *count is set to the number needed. With an active
// process_list_race, the first fetch (non-empty buffer) of each listing makes
// `extra` short-lived processes appear; they stay until a call succeeds.
template <typename Info>
nvmlReturn_t ProcessList(const char* call, nvmlDevice_t device, unsigned int* count, Info* infos,
                         ProcessType type) {
  return FakeNvml::Instance().DeviceCall(
      call, device,
      [&](const CallContext& c) {
        if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        std::vector<Entry> entries = ListedProcesses(c, type);
        const unsigned extra = type == ProcessType::kCompute && c.mig == nullptr
                                   ? fake::RaceExtra(c.scenario, c.device_index, c.now.t)
                                   : 0;
        if (extra > 0) {
          if (*count > 0 && infos != nullptr) c.runtime->race_fired = true;
          if (c.runtime->race_fired) {
            const fake::DeviceSpec& d = *c.device;
            const bool mig = d.mig_enabled && !d.mig_instances.empty();
            for (unsigned k = 1; k <= extra; ++k) {
              entries.push_back(Entry{kRacePidBase + k, fake::ToULL(kRaceProcessBytes),
                                      mig ? d.mig_instances[0].gi : NVML_INVALID_INSTANCE_ID,
                                      mig ? d.mig_instances[0].ci : NVML_INVALID_INSTANCE_ID});
            }
          }
        }
        const auto needed = static_cast<unsigned>(entries.size());
        if (*count < needed) {
          *count = needed;
          return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        if (needed > 0 && infos == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        for (unsigned i = 0; i < needed; ++i) Fill(entries[i], infos[i]);
        *count = needed;
        c.runtime->race_fired = false;
        return NVML_SUCCESS;
      },
      MigHandles::kAccepted);
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_t* infos) {
  return ProcessList("nvmlDeviceGetComputeRunningProcesses_v3", device, count, infos,
                     ProcessType::kCompute);
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_t* infos) {
  return ProcessList("nvmlDeviceGetComputeRunningProcesses_v2", device, count, infos,
                     ProcessType::kCompute);
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                  nvmlProcessInfo_v1_t* infos) {
  return ProcessList("nvmlDeviceGetComputeRunningProcesses", device, count, infos,
                     ProcessType::kCompute);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                      nvmlProcessInfo_t* infos) {
  return ProcessList("nvmlDeviceGetGraphicsRunningProcesses_v3", device, count, infos,
                     ProcessType::kGraphics);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                      nvmlProcessInfo_t* infos) {
  return ProcessList("nvmlDeviceGetGraphicsRunningProcesses_v2", device, count, infos,
                     ProcessType::kGraphics);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                   nvmlProcessInfo_v1_t* infos) {
  return ProcessList("nvmlDeviceGetGraphicsRunningProcesses", device, count, infos,
                     ProcessType::kGraphics);
}

// Samples newer than `last_seen_us` only; NOT_FOUND when there are none;
// INSUFFICIENT_SIZE (with *count = needed) for a NULL or short buffer.
// A process with util_stale reports a sample stamped one hour in the past.
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t* samples,
                                             unsigned int* count, unsigned long long last_seen_us) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetProcessUtilization", device, [&](const CallContext& c) {
        if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (c.device->mig_enabled) return NVML_ERROR_NOT_SUPPORTED;
        const unsigned long long now_us = c.clock.TimestampUs(c.now);
        std::vector<nvmlProcessUtilizationSample_t> fresh;
        for (const ProcessSpec* p : fake::ActiveProcesses(*c.device, c.now.t)) {
          const double age = std::max(0.0, c.now.t - p->start_s);
          nvmlProcessUtilizationSample_t s{};
          s.pid = p->pid;
          s.timeStamp = p->util_stale ? now_us - 3600ull * 1000000ull : now_us;
          s.smUtil = fake::ToUnsigned(p->sm_util.Evaluate(age));
          s.memUtil = fake::ToUnsigned(p->mem_util.Evaluate(age));
          s.encUtil = fake::ToUnsigned(p->enc_util.Evaluate(age));
          s.decUtil = fake::ToUnsigned(p->dec_util.Evaluate(age));
          if (s.timeStamp > last_seen_us) fresh.push_back(s);
        }
        const auto needed = static_cast<unsigned>(fresh.size());
        if (needed == 0) return NVML_ERROR_NOT_FOUND;
        if (samples == nullptr || *count < needed) {
          *count = needed;
          return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        for (unsigned i = 0; i < needed; ++i) samples[i] = fresh[i];
        *count = needed;
        return NVML_SUCCESS;
      });
}

}  // extern "C"
