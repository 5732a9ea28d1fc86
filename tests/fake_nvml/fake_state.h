// The library's one process-wide object (it stands in for a C API, so it
// cannot be passed in): the loaded scenario, the init reference count, the
// device handles and the little mutable per-device state. Every exported NVML
// function goes through SystemCall or DeviceCall, which check init, resolve
// the handle, apply faults, and run the call's body with mu_ held. Slow and
// hanging calls sleep before taking the lock, so one hanging device does not
// block calls to the others. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/nvml/nvml_api.h"
#include "device_model.h"
#include "fake_clock.h"
#include "faults.h"
#include "no_destructor.h"
#include "scenario.h"

// The opaque NVML handle type. Handles are never freed or reused for another
// device, so a stale handle from before nvmlShutdown stays harmless.
struct nvmlDevice_st {
  unsigned device;
  int mig;  // MIG instance index, or -1 for the physical GPU
};

// An event set: per registered device, the next XID to deliver (the wall
// clock's cycle and an index into DeviceSpec::xids). Never freed while the
// library is loaded, so a stale handle is harmless.
struct nvmlEventSet_st {
  struct Registration {
    unsigned device;
    std::int64_t cycle;
    std::size_t next;
  };
  std::vector<Registration> registrations;
  bool freed = false;
};

namespace gpuwatch::fake_nvml {

// Mutable per-device state, reset at every successful init.
struct DeviceRuntime {
  EnergyCache energy;
  bool race_fired = false;  // the extra processes of a process_list_race are listed
};

// What a call's body sees. Valid only during the body (mu_ held).
struct CallContext {
  const Scenario& scenario;
  ScenarioClock clock;
  ScenarioTime now;
  const DeviceSpec* device = nullptr;  // DeviceCall only
  unsigned device_index = 0;
  const MigInstanceSpec* mig = nullptr;  // set for MIG device handles
  DeviceRuntime* runtime = nullptr;
  class FakeNvml* owner = nullptr;
};

enum class MigHandles { kRejected, kAccepted };  // may a MIG handle be passed?

class FakeNvml {
 public:
  static FakeNvml& Instance();

  nvmlReturn_t Init();
  nvmlReturn_t Shutdown();

  // A call not about one device handle (system queries, device count and
  // handles); `device` lets faults on that device apply (never `lost`).
  template <typename Body>
  nvmlReturn_t SystemCall(std::string_view call, Body&& body,
                          std::optional<unsigned> device = std::nullopt);

  // A call on `handle`. A MIG handle gets NOT_SUPPORTED unless `mig` accepts
  // it. `lost_applies` false: succeeds on a lost GPU.
  template <typename Body>
  nvmlReturn_t DeviceCall(std::string_view call, nvmlDevice_t handle, Body&& body,
                          MigHandles mig = MigHandles::kRejected, bool lost_applies = true);

  // The stable handle of (device, mig). Call only from a body (mu_ held).
  nvmlDevice_t HandleLocked(unsigned device, int mig);
  // A new event set, and a live one by handle (nullptr: unknown or freed).
  // Call only from a body (mu_ held).
  nvmlEventSet_t NewEventSetLocked();
  nvmlEventSet_st* EventSetLocked(nvmlEventSet_t set);

 private:
  FakeNvml() = default;
  friend class NoDestructor<FakeNvml>;

  // Resolves `handle` (mu_ held); false when it is not one of ours.
  bool Resolve(nvmlDevice_t handle, unsigned* device, int* mig) const;
  // Sleeps for a slow or hanging call, without the lock.
  static void Delay(const FaultDecision& decision, const ScenarioClock& clock);
  FaultDecision Check(std::string_view call, std::optional<unsigned> device, bool lost_applies,
                      ScenarioClock* clock);

  std::mutex mu_;
  int refcount_ = 0;                                     // guarded by mu_
  std::optional<Scenario> scenario_;                     // guarded by mu_; set while refcount_ > 0
  std::vector<DeviceRuntime> runtime_;                   // guarded by mu_
  std::vector<std::unique_ptr<nvmlDevice_st>> handles_;  // guarded by mu_; never shrinks
  std::vector<std::unique_ptr<nvmlEventSet_st>> event_sets_;  // guarded by mu_; never shrinks
  std::optional<std::chrono::steady_clock::time_point> first_init_;  // guarded by mu_
  std::string clock_scenario_;  // guarded by mu_; the file first_init_ belongs to
  ScenarioClock clock_;         // guarded by mu_
};

template <typename Body>
nvmlReturn_t FakeNvml::SystemCall(std::string_view call, Body&& body,
                                  std::optional<unsigned> device) {
  ScenarioClock clock;
  const FaultDecision decision = Check(call, device, false, &clock);
  if (decision.code == NVML_ERROR_UNINITIALIZED) return decision.code;
  Delay(decision, clock);
  if (decision.code != NVML_SUCCESS) return decision.code;
  std::lock_guard lock(mu_);
  if (refcount_ == 0) return NVML_ERROR_UNINITIALIZED;
  CallContext ctx{*scenario_, clock_, clock_.Now()};
  ctx.owner = this;
  return body(ctx);
}

template <typename Body>
nvmlReturn_t FakeNvml::DeviceCall(std::string_view call, nvmlDevice_t handle, Body&& body,
                                  MigHandles mig_handles, bool lost_applies) {
  unsigned device = 0;
  int mig = -1;
  {
    std::lock_guard lock(mu_);
    if (refcount_ == 0) return NVML_ERROR_UNINITIALIZED;
    if (!Resolve(handle, &device, &mig)) return NVML_ERROR_INVALID_ARGUMENT;
  }
  ScenarioClock clock;
  const FaultDecision decision = Check(call, device, lost_applies, &clock);
  Delay(decision, clock);
  if (decision.code != NVML_SUCCESS) return decision.code;
  std::lock_guard lock(mu_);
  if (refcount_ == 0) return NVML_ERROR_UNINITIALIZED;
  if (!Resolve(handle, &device, &mig)) return NVML_ERROR_INVALID_ARGUMENT;
  if (mig >= 0 && mig_handles == MigHandles::kRejected) return NVML_ERROR_NOT_SUPPORTED;
  CallContext ctx{*scenario_, clock_, clock_.Now()};
  ctx.device = &scenario_->devices[device];
  ctx.device_index = device;
  ctx.mig = mig >= 0 ? &ctx.device->mig_instances[static_cast<unsigned>(mig)] : nullptr;
  ctx.runtime = &runtime_[device];
  ctx.owner = this;
  return body(ctx);
}

// Copies `text` into an NVML string buffer of `length` bytes.
nvmlReturn_t CopyString(const std::string& text, char* buffer, unsigned length);

}  // namespace gpuwatch::fake_nvml
