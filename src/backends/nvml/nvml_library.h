// NvmlLibrary: the dlopen'ed libnvidia-ml and its entry points, resolved from
// the one symbol list. Owns the handle (RAII); a missing symbol is a null
// pointer, not a failure. Immutable after Load: safe to share read-only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/nvml/nvml_symbols.h"
#include "gpuwatch/status.h"

namespace gpuwatch::nvml {

struct Api {
#define GPUWATCH_NVML_POINTER(name, ret, params) ret(*name) params = nullptr;
  GPUWATCH_NVML_SYMBOLS(GPUWATCH_NVML_POINTER)
#undef GPUWATCH_NVML_POINTER
};

class NvmlLibrary {
 public:
  // Loads `path` when non-empty (GPUWATCH_NVML_LIBRARY), else
  // libnvidia-ml.so.1, then libnvidia-ml.so. The error names every path tried
  // and what the loader said.
  static Result<std::unique_ptr<NvmlLibrary>> Load(const std::string& path);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const Api& api() const { return api_; }
  const std::string& path() const { return path_; }
  const std::vector<std::string>& missing_symbols() const { return missing_; }
  // nvmlErrorString, or "NVML error N" when the library lacks it.
  std::string ErrorString(nvmlReturn_t rc) const;

 private:
  NvmlLibrary() = default;
  void* handle_ = nullptr;
  std::string path_;
  Api api_;
  std::vector<std::string> missing_;
};

}  // namespace gpuwatch::nvml
