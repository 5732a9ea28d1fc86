#include "backends/nvml/nvml_library.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <climits>

namespace gpuwatch::nvml {

namespace {

// The file the dynamic loader actually opened (resolves a bare soname).
std::string LoadedPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    char resolved[PATH_MAX];
    if (realpath(map->l_name, resolved) != nullptr) return resolved;
    return map->l_name;
  }
  return fallback;
}

}  // namespace

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Load(const std::string& path) {
  std::vector<std::string> candidates;
  if (!path.empty()) {
    candidates.push_back(path);
  } else {
    candidates = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
  }
  std::string tried;
  for (const auto& candidate : candidates) {
    dlerror();
    // RTLD_NODELETE: the library stays mapped after dlclose. libnvidia-ml
    // keeps driver state and threads of its own that must not be unmapped
    // under them, and its long-lived allocations stay reachable for leak
    // checkers.
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += fmt::format("\n  {}: {}", candidate, why != nullptr ? why : "not found");
      continue;
    }
    std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary());
    lib->handle_ = handle;
    lib->path_ = LoadedPath(handle, candidate);
#define GPUWATCH_NVML_RESOLVE(name, ret, params)                          \
  lib->api_.name = reinterpret_cast<ret(*) params>(dlsym(handle, #name)); \
  if (lib->api_.name == nullptr) lib->missing_.emplace_back(#name);
    GPUWATCH_NVML_SYMBOLS(GPUWATCH_NVML_RESOLVE)
#undef GPUWATCH_NVML_RESOLVE
    return lib;
  }
  return Status::NotFound(
      fmt::format("NVML library not found (is the NVIDIA driver installed?); tried:{}", tried));
}

NvmlLibrary::~NvmlLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::string NvmlLibrary::ErrorString(nvmlReturn_t rc) const {
  if (api_.nvmlErrorString != nullptr) {
    const char* s = api_.nvmlErrorString(rc);
    if (s != nullptr) return s;
  }
  return fmt::format("NVML error {}", rc);
}

}  // namespace gpuwatch::nvml
