#include "fake_state.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "scenario_parser.h"

namespace gpuwatch::fake_nvml {

FakeNvml& FakeNvml::Instance() {
  static NoDestructor<FakeNvml> instance;
  return *instance.get();
}

nvmlReturn_t FakeNvml::Init() {
  std::lock_guard lock(mu_);
  if (refcount_ > 0) {
    ++refcount_;
    return NVML_SUCCESS;
  }
  const char* path = std::getenv("GPUWATCH_FAKE_SCENARIO");
  if (path == nullptr || *path == '\0') {
    std::fprintf(stderr,
                 "fake NVML: GPUWATCH_FAKE_SCENARIO is not set (path of a scenario file, "
                 "see docs/scenarios.md)\n");
    return NVML_ERROR_UNKNOWN;
  }
  LoadResult loaded = LoadScenarioFile(path);
  if (!loaded.scenario) {
    std::fprintf(stderr, "fake NVML: %s\n", loaded.error.c_str());
    return NVML_ERROR_UNKNOWN;
  }
  if (loaded.scenario->init_error != NVML_SUCCESS) return loaded.scenario->init_error;
  // The init clock counts from the first nvmlInit of this scenario file: a
  // re-init of the same file (a driver reload) keeps its timeline, another
  // file starts its own at t = 0.
  if (!first_init_ || clock_scenario_ != path) {
    first_init_ = std::chrono::steady_clock::now();
    clock_scenario_ = path;
  }
  scenario_ = std::move(loaded.scenario);
  clock_ =
      ScenarioClock(scenario_->clock, scenario_->period_s, scenario_->time_scale, *first_init_);
  runtime_.assign(scenario_->devices.size(), DeviceRuntime{});
  refcount_ = 1;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::Shutdown() {
  std::lock_guard lock(mu_);
  if (refcount_ == 0) return NVML_ERROR_UNINITIALIZED;
  if (--refcount_ == 0) scenario_.reset();
  return NVML_SUCCESS;
}

nvmlDevice_t FakeNvml::HandleLocked(unsigned device, int mig) {
  for (const auto& h : handles_) {
    if (h->device == device && h->mig == mig) return h.get();
  }
  handles_.push_back(std::make_unique<nvmlDevice_st>(nvmlDevice_st{device, mig}));
  return handles_.back().get();
}

nvmlEventSet_t FakeNvml::NewEventSetLocked() {
  event_sets_.push_back(std::make_unique<nvmlEventSet_st>());
  return event_sets_.back().get();
}

nvmlEventSet_st* FakeNvml::EventSetLocked(nvmlEventSet_t set) {
  for (const auto& s : event_sets_) {
    if (s.get() == set) return s->freed ? nullptr : s.get();
  }
  return nullptr;
}

bool FakeNvml::Resolve(nvmlDevice_t handle, unsigned* device, int* mig) const {
  for (const auto& h : handles_) {
    if (h.get() != handle) continue;
    if (h->device >= scenario_->devices.size()) return false;
    const DeviceSpec& d = scenario_->devices[h->device];
    if (h->mig >= 0 &&
        (!d.mig_enabled || static_cast<unsigned>(h->mig) >= d.mig_instances.size())) {
      return false;
    }
    *device = h->device;
    *mig = h->mig;
    return true;
  }
  return false;
}

FaultDecision FakeNvml::Check(std::string_view call, std::optional<unsigned> device,
                              bool lost_applies, ScenarioClock* clock) {
  std::lock_guard lock(mu_);
  if (refcount_ == 0) {
    FaultDecision uninitialized;
    uninitialized.code = NVML_ERROR_UNINITIALIZED;
    return uninitialized;
  }
  *clock = clock_;
  return CheckFaults(*scenario_, call, device, clock_.Now().t, lost_applies);
}

void FakeNvml::Delay(const FaultDecision& decision, const ScenarioClock& clock) {
  if (decision.slow_ms > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(decision.slow_ms));
  }
  if (!decision.hang) return;
  // Blocks until the fault's window closes or its `ms` have passed.
  const std::optional<double> until = decision.hang_until_s;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double, std::milli>(decision.hang_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (until && clock.Now().t >= *until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

nvmlReturn_t CopyString(const std::string& text, char* buffer, unsigned length) {
  if (buffer == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < text.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

}  // namespace gpuwatch::fake_nvml
