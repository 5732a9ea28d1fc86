// NVML return codes by name (for scenario files) and NVIDIA's exact
// nvmlErrorString texts.
#pragma once

#include <optional>
#include <string_view>

#include "backends/nvml/nvml_api.h"

namespace gpuwatch::fake_nvml {

// Not in nvml_api.h: returned by nvmlDeviceGetDisplayMode on driver 580 / H200.
inline constexpr nvmlReturn_t kNvmlErrorDeprecated = 26;

// "DRIVER_NOT_LOADED", "NVML_ERROR_DRIVER_NOT_LOADED", "SUCCESS" or a number.
std::optional<nvmlReturn_t> ErrorCodeFromName(std::string_view name);

// The text nvmlErrorString returns for `code`.
const char* ErrorText(nvmlReturn_t code);

}  // namespace gpuwatch::fake_nvml
