// Turning NVML return codes into Readings and init failures into Statuses
// with the exact reason and what to do about it.
#pragma once

#include <string_view>

#include "backends/nvml/nvml_library.h"
#include "gpuwatch/reading.h"

namespace gpuwatch::nvml {

Missing MissingFor(nvmlReturn_t rc);
// "nvmlDeviceGetFanSpeed: Not Supported"
Reading AbsentFor(const NvmlLibrary& lib, std::string_view call, nvmlReturn_t rc);
Reading MissingSymbol(std::string_view call);
// The init failure, named: driver not loaded, version mismatch, permission...
Status InitError(const NvmlLibrary& lib, std::string_view call, nvmlReturn_t rc);

}  // namespace gpuwatch::nvml
