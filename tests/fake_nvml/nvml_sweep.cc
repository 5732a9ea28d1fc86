// The fake's own hook for a sweep's test job (not NVML): what the device
// grants the calling process, a child that `gpuwatch sweep` started, as its
// parent's fake sees it (scenario.h `memory_of_bs`). The fake trainer asks it
// and exits as an out-of-memory would when it is granted less than it wants.
#include <unistd.h>

#include "device_model.h"
#include "fake_state.h"

namespace fake = gpuwatch::fake_nvml;

extern "C" {

// NOT_FOUND: no sweep process of this device is bound to the caller.
__attribute__((visibility("default"))) nvmlReturn_t gpuwatch_fake_sweep_allocate(
    nvmlDevice_t device, unsigned long long* wanted_bytes, unsigned long long* granted_bytes) {
  return fake::FakeNvml::Instance().DeviceCall(
      "gpuwatch_fake_sweep_allocate", device, [&](const fake::CallContext& c) {
        if (wanted_bytes == nullptr || granted_bytes == nullptr) {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        const auto me = static_cast<unsigned>(getpid());
        for (const auto& b : fake::BindSweep(*c.device, c.now.t,
                                             fake::ChildrenOf(static_cast<unsigned>(getppid())))) {
          if (b.pid != me) continue;
          *wanted_bytes = fake::ToULL(b.wanted_bytes);
          *granted_bytes = fake::ToULL(b.granted_bytes);
          return NVML_SUCCESS;
        }
        return NVML_ERROR_NOT_FOUND;
      });
}

}  // extern "C"
