#include "nvml_errors.h"

#include "units.h"

namespace gpuwatch::fake_nvml {
namespace {

struct ErrorEntry {
  nvmlReturn_t code;
  std::string_view name;
  const char* text;
};

// Texts as returned by libnvidia-ml's nvmlErrorString.
constexpr ErrorEntry kErrors[] = {
    {0, "SUCCESS", "Success"},
    {1, "UNINITIALIZED", "Uninitialized"},
    {2, "INVALID_ARGUMENT", "Invalid Argument"},
    {3, "NOT_SUPPORTED", "Not Supported"},
    {4, "NO_PERMISSION", "Insufficient Permissions"},
    {5, "ALREADY_INITIALIZED", "Already Initialized"},
    {6, "NOT_FOUND", "Not Found"},
    {7, "INSUFFICIENT_SIZE", "Insufficient Size"},
    {8, "INSUFFICIENT_POWER", "Insufficient External Power"},
    {9, "DRIVER_NOT_LOADED", "Driver Not Loaded"},
    {10, "TIMEOUT", "Timeout"},
    {11, "IRQ_ISSUE", "Interrupt Request Issue"},
    {12, "LIBRARY_NOT_FOUND", "NVML Shared Library Not Found"},
    {13, "FUNCTION_NOT_FOUND", "Function Not Found"},
    {14, "CORRUPTED_INFOROM", "Corrupted infoROM"},
    {15, "GPU_IS_LOST", "GPU is lost"},
    {16, "RESET_REQUIRED", "GPU requires restart"},
    {17, "OPERATING_SYSTEM", "The operating system has blocked the request."},
    {18, "LIB_RM_VERSION_MISMATCH", "RM has detected an NVML/RM version mismatch."},
    {19, "IN_USE", "In use by another client"},
    {20, "MEMORY", "Insufficient Memory"},
    {21, "NO_DATA", "No data"},
    {22, "VGPU_ECC_NOT_SUPPORTED",
     "The requested vgpu operation is not available on target device, becasue ECC is enabled"},
    {23, "INSUFFICIENT_RESOURCES", "Ran out of critical resources, other than memory"},
    {24, "FREQ_NOT_SUPPORTED", "Ran out of critical resources, other than memory"},
    {25, "ARGUMENT_VERSION_MISMATCH", "Argument version mismatch"},
    {26, "DEPRECATED", "Requested functionality has been deprecated"},
    {27, "NOT_READY", "System is not ready for the requested operation"},
    {28, "GPU_NOT_FOUND", "No GPUs were found"},
    {29, "INVALID_STATE", "Resource not in correct state to perform requested operation"},
    {999, "UNKNOWN", "Unknown Error"},
};

}  // namespace

std::optional<nvmlReturn_t> ErrorCodeFromName(std::string_view name) {
  if (name.substr(0, 11) == "NVML_ERROR_") name.remove_prefix(11);
  if (name == "NVML_SUCCESS") name = "SUCCESS";
  for (const ErrorEntry& e : kErrors) {
    if (e.name == name) return e.code;
  }
  if (auto number = ParseNumber(name);
      number && *number >= 0 && *number <= 999 && *number == static_cast<int>(*number)) {
    return static_cast<nvmlReturn_t>(*number);
  }
  return std::nullopt;
}

const char* ErrorText(nvmlReturn_t code) {
  for (const ErrorEntry& e : kErrors) {
    if (e.code == code) return e.text;
  }
  return "Unknown Error";
}

}  // namespace gpuwatch::fake_nvml
