// Exported NVML entry points that read a stream: the driver's sample buffers
// (nvmlDeviceGetSamples) and XID events (event sets).
//
// Sample buffers hold samples on a fixed grid of scenario time, as an H200 on
// driver 580 does (tests/gpu/sample_buffers.py): power every 20 ms from
// power_instant, the last 119; GPU utilization every 200 ms, the last 71;
// stamped with the CPU time they were taken at. Event sets deliver a
// device's `xid` entries whose time has come since it was registered.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "device_model.h"
#include "fake_state.h"
#include "nvml_exports.h"

namespace fake = gpuwatch::fake_nvml;
using fake::CallContext;
using fake::FakeNvml;

namespace {

struct Grid {
  double per_second;                                 // sample k is taken at k / per_second
  long long buffered;                                // the newest this many are kept
  double (*value)(const fake::DeviceSpec&, double);  // in the sample's unit
};

std::optional<Grid> GridOf(int type) {
  if (type == NVML_TOTAL_POWER_SAMPLES) {
    return Grid{50, 119, [](const fake::DeviceSpec& d, double t) {
                  return fake::PowerInstantW(d, t) * 1000.0;  // mW
                }};
  }
  if (type == NVML_GPU_UTILIZATION_SAMPLES) {
    return Grid{5, 71, [](const fake::DeviceSpec& d, double t) {
                  return fake::UtilizationGpu(d, t);  // percent
                }};
  }
  return std::nullopt;
}

// Scenario seconds of one wall-clock period (cycles repeat the scenario).
double PeriodT(const fake::Scenario& s) { return s.period_s * s.time_scale; }

// Is XID `index` of `cycle` due at `now`?
bool Due(const fake::DeviceSpec& d, std::int64_t cycle, std::size_t index,
         const fake::ScenarioTime& now) {
  return cycle < now.cycle || (cycle == now.cycle && d.xids[index].at_s <= now.t);
}

// Delivers the earliest due XID of the set's devices into `data`.
nvmlReturn_t NextXid(const CallContext& c, nvmlEventSet_st& set, nvmlEventData_t* data) {
  nvmlEventSet_st::Registration* best = nullptr;
  for (auto& r : set.registrations) {
    if (r.device >= c.scenario.devices.size()) continue;
    const fake::DeviceSpec& d = c.scenario.devices[r.device];
    if (d.xids.empty()) continue;
    if (r.next >= d.xids.size()) {  // the next one is in the following cycle
      r.cycle += 1;
      r.next = 0;
    }
    if (!Due(d, r.cycle, r.next, c.now)) continue;
    auto when = [&](const nvmlEventSet_st::Registration& x) {
      return static_cast<double>(x.cycle) * PeriodT(c.scenario) +
             c.scenario.devices[x.device].xids[x.next].at_s;
    };
    if (best == nullptr || when(r) < when(*best)) best = &r;
  }
  if (best == nullptr) return NVML_ERROR_TIMEOUT;
  data->device = c.owner->HandleLocked(best->device, -1);
  data->eventType = nvmlEventTypeXidCriticalError;
  data->eventData = c.scenario.devices[best->device].xids[best->next].code;
  data->gpuInstanceId = NVML_INVALID_INSTANCE_ID;
  data->computeInstanceId = NVML_INVALID_INSTANCE_ID;
  best->next += 1;
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

// NOT_SUPPORTED for other sample types, and for utilization on a MIG-enabled GPU.
// NOT_FOUND when no sample is newer than `last_seen_us`.
nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, int type, unsigned long long last_seen_us,
                                  int* value_type, unsigned int* count, nvmlSample_t* samples) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetSamples", device, [&](const CallContext& c) {
    if (value_type == nullptr || count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const std::optional<Grid> grid = GridOf(type);
    if (!grid) return NVML_ERROR_NOT_SUPPORTED;
    if (type == NVML_GPU_UTILIZATION_SAMPLES && c.device->mig_enabled) {
      return NVML_ERROR_NOT_SUPPORTED;
    }
    std::vector<nvmlSample_t> fresh;
    const auto last_k = static_cast<long long>(std::floor(c.now.t * grid->per_second + 1e-9));
    for (long long k = std::max(0LL, last_k - grid->buffered + 1); k <= last_k; ++k) {
      const double t = static_cast<double>(k) / grid->per_second;
      nvmlSample_t s{};
      s.timeStamp = c.clock.TimestampUsAt(c.now, std::min(t, c.now.t));
      if (s.timeStamp <= last_seen_us) continue;
      s.sampleValue.uiVal = fake::ToUnsigned(grid->value(*c.device, t));
      fresh.push_back(s);
    }
    *value_type = NVML_VALUE_TYPE_UNSIGNED_INT;
    const auto needed = static_cast<unsigned>(fresh.size());
    if (needed == 0) return NVML_ERROR_NOT_FOUND;
    if (samples == nullptr) {
      *count = needed;
      return NVML_SUCCESS;
    }
    if (*count < needed) {
      *count = needed;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    std::copy(fresh.begin(), fresh.end(), samples);
    *count = needed;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  return FakeNvml::Instance().SystemCall("nvmlEventSetCreate", [&](const CallContext& c) {
    if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *set = c.owner->NewEventSetLocked();
    return NVML_SUCCESS;
  });
}

// Only XID critical errors are offered; MIG handles are NOT_SUPPORTED.
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types,
                                      nvmlEventSet_t set) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceRegisterEvents", device, [&](const CallContext& c) {
        nvmlEventSet_st* s = c.owner->EventSetLocked(set);
        if (s == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (types == 0 || (types & ~nvmlEventTypeXidCriticalError) != 0) {
          return NVML_ERROR_NOT_SUPPORTED;
        }
        const auto& xids = c.device->xids;
        // Events already past are not delivered.
        const auto next = static_cast<std::size_t>(
            std::upper_bound(xids.begin(), xids.end(), c.now.t,
                             [](double t, const fake::XidSpec& x) { return t < x.at_s; }) -
            xids.begin());
        std::erase_if(s->registrations, [&](const auto& r) { return r.device == c.device_index; });
        s->registrations.push_back({c.device_index, c.now.cycle, next});
        return NVML_SUCCESS;
      });
}

// Waits up to `timeout_ms` for an event, polling every 10 ms without the lock.
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                 unsigned int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const nvmlReturn_t rc =
        FakeNvml::Instance().SystemCall("nvmlEventSetWait_v2", [&](const CallContext& c) {
          nvmlEventSet_st* s = c.owner->EventSetLocked(set);
          if (s == nullptr || data == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
          return NextXid(c, *s, data);
        });
    if (rc != NVML_ERROR_TIMEOUT || std::chrono::steady_clock::now() >= deadline) return rc;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  return FakeNvml::Instance().SystemCall("nvmlEventSetFree", [&](const CallContext& c) {
    nvmlEventSet_st* s = c.owner->EventSetLocked(set);
    if (s == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    s->freed = true;
    s->registrations.clear();
    return NVML_SUCCESS;
  });
}

}  // extern "C"
