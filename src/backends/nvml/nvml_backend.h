// NvmlBackend: the real GPUs through libnvidia-ml (or the fake library, which
// is the same code path). Follows ARCHITECTURE.md's NVML rules: dlopen with an
// override, versioned symbols first, unsupported probes cached and re-probed
// rarely, GPU_IS_LOST per device, init errors named exactly.
// ReadDevice and ReadMigDevices may run for different GPUs at once, each GPU
// from one thread at a time (every GPU's state is its own, and NVML is
// thread-safe); everything else from one thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/nvml/nvml_library.h"
#include "backends/nvml/nvml_streams.h"
#include "gpuwatch/backend.h"

namespace gpuwatch::nvml {

struct NvmlOptions {
  std::string library_path;  // empty: the system's libnvidia-ml.so.1
  bool demo = false;         // the library is the fake one with the demo fleet
  // How long a probe that answered NOT_SUPPORTED is skipped before asking again.
  std::chrono::seconds unsupported_reprobe{600};
  // nvmlShutdown when the backend goes away. A command that exits right after
  // can skip it: the driver releases everything at process exit, and the call
  // costs ~2 ms on an H200 (docs/BENCHMARKS.md).
  bool shutdown_on_close = true;
  // Per-process utilization samples older than this are stale and rejected.
  std::chrono::seconds process_util_window{10};
};

class NvmlBackend final : public Backend {
 public:
  static Result<std::unique_ptr<NvmlBackend>> Open(const NvmlOptions& options);
  ~NvmlBackend() override;

  const BackendInfo& info() const override { return info_; }
  HostFields ReadHost() override;
  int DeviceCount() const override { return static_cast<int>(devices_.size()); }
  void ReadDevice(int index, const FieldMask& which, bool processes, DeviceSample& out) override;
  std::vector<DeviceSample> ReadMigDevices(int index, const FieldMask& which,
                                           bool processes) override;

 private:
  struct DeviceState {
    nvmlDevice_t handle = nullptr;
    bool lost = false;
    // Probe index -> when to ask again; skipped until then.
    std::map<std::size_t, std::chrono::steady_clock::time_point> unsupported;
    std::map<std::size_t, Reading> unsupported_reading;
    unsigned long long util_last_seen_us = 0;
    std::size_t process_capacity = 16;
    DeviceStreams streams;
  };

  NvmlBackend(std::unique_ptr<NvmlLibrary> lib, NvmlOptions options);
  void ReadFields(DeviceState& state, const FieldMask& which, DeviceSample& out);
  void ReadProcesses(DeviceState& state, DeviceSample& out);
  void MarkLost(DeviceSample& out, const std::string& detail);

  std::unique_ptr<NvmlLibrary> lib_;
  NvmlOptions options_;
  BackendInfo info_;
  std::vector<DeviceState> devices_;
  // Per GPU, by MIG index. Like devices_, sized once: each GPU's entry is
  // touched only by the thread reading that GPU.
  std::vector<std::map<int, DeviceState>> mig_states_;
};

}  // namespace gpuwatch::nvml
