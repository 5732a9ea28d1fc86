#include "backends/nvml/nvml_errors.h"

#include <fmt/format.h>

namespace gpuwatch::nvml {

Missing MissingFor(nvmlReturn_t rc) {
  switch (rc) {
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
    case NVML_ERROR_DEPRECATED:
      return Missing::kNotSupported;
    case NVML_ERROR_NO_PERMISSION:
      return Missing::kNoPermission;
    case NVML_ERROR_GPU_IS_LOST:
      return Missing::kDeviceLost;
    default:
      return Missing::kFailed;
  }
}

Reading AbsentFor(const NvmlLibrary& lib, std::string_view call, nvmlReturn_t rc) {
  return Reading::Absent(MissingFor(rc), fmt::format("{}: {}", call, lib.ErrorString(rc)));
}

Reading MissingSymbol(std::string_view call) {
  return Reading::Absent(Missing::kNotSupported,
                         fmt::format("{}: not in this driver's libnvidia-ml", call));
}

Status InitError(const NvmlLibrary& lib, std::string_view call, nvmlReturn_t rc) {
  const std::string said = fmt::format("{} returned {} ({})", call, lib.ErrorString(rc), rc);
  switch (rc) {
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return Status::Unavailable(fmt::format(
          "NVIDIA driver not loaded: {}. The kernel module is not running: check `lsmod | grep "
          "nvidia` and `dmesg | grep -i nvidia`; in a container, run it with the GPU runtime "
          "(--gpus all).",
          said));
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return Status::Unavailable(fmt::format(
          "driver/library version mismatch: {}. {} belongs to a different driver version than "
          "the loaded kernel module (usually after a driver upgrade without reboot): reboot, or "
          "reload the nvidia kernel modules.",
          said, lib.path()));
    case NVML_ERROR_NO_PERMISSION:
      return Status::PermissionDenied(fmt::format(
          "no permission to use the GPU: {}. Check the permissions of /dev/nvidia*.", said));
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return Status::NotFound(fmt::format("NVML could not find its parts: {}.", said));
    default:
      return Status::Unavailable(fmt::format("NVML failed to initialize: {}.", said));
  }
}

}  // namespace gpuwatch::nvml
