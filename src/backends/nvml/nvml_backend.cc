#include "backends/nvml/nvml_backend.h"

#include <fmt/format.h>

#include "backends/nvml/nvml_errors.h"
#include "backends/nvml/nvml_probes.h"
#include "backends/nvml/nvml_processes.h"
#include "backends/nvml/plausibility.h"
#include "core/driver_calls.h"

namespace gpuwatch::nvml {
namespace {

using Clock = std::chrono::steady_clock;

bool Wants(const FieldMask& which, const Probe& probe) {
  for (FieldId id : probe.Fields()) {
    if (Has(which, id)) return true;
  }
  return false;
}

nvmlReturn_t HandleByIndex(const Api& api, unsigned i, nvmlDevice_t* handle) {
  if (api.nvmlDeviceGetHandleByIndex_v2 != nullptr)
    return api.nvmlDeviceGetHandleByIndex_v2(i, handle);
  if (api.nvmlDeviceGetHandleByIndex != nullptr) return api.nvmlDeviceGetHandleByIndex(i, handle);
  return NVML_ERROR_FUNCTION_NOT_FOUND;
}

}  // namespace

Result<std::unique_ptr<NvmlBackend>> NvmlBackend::Open(const NvmlOptions& options) {
  const DriverCallScope scope("NVML initialisation (nvmlInit, device discovery)");
  auto lib = NvmlLibrary::Load(options.library_path);
  if (!lib) return lib.error();
  const Api& api = (*lib)->api();
  auto init = api.nvmlInit_v2 != nullptr ? api.nvmlInit_v2 : api.nvmlInit;
  if (init == nullptr) {
    return Status::NotFound(fmt::format(
        "{} is not an NVML library: it has no nvmlInit_v2 or nvmlInit", (*lib)->path()));
  }
  const nvmlReturn_t rc = init();
  if (rc != NVML_SUCCESS) {
    return InitError(**lib, api.nvmlInit_v2 != nullptr ? "nvmlInit_v2" : "nvmlInit", rc);
  }
  std::unique_ptr<NvmlBackend> backend(new NvmlBackend(std::move(*lib), options));

  unsigned count = 0;
  auto get_count =
      api.nvmlDeviceGetCount_v2 != nullptr ? api.nvmlDeviceGetCount_v2 : api.nvmlDeviceGetCount;
  const nvmlReturn_t crc = get_count != nullptr ? get_count(&count) : NVML_ERROR_FUNCTION_NOT_FOUND;
  if (crc != NVML_SUCCESS) return InitError(*backend->lib_, "nvmlDeviceGetCount_v2", crc);
  backend->devices_.resize(count);
  backend->mig_states_.resize(count);
  for (unsigned i = 0; i < count; ++i) {
    // A device whose handle cannot be had now is kept and re-probed: it stays
    // in the list as lost rather than shifting the others' indices.
    if (HandleByIndex(api, i, &backend->devices_[i].handle) != NVML_SUCCESS) {
      backend->devices_[i].handle = nullptr;
    }
  }
  return backend;
}

NvmlBackend::NvmlBackend(std::unique_ptr<NvmlLibrary> lib, NvmlOptions options)
    : lib_(std::move(lib)), options_(std::move(options)) {
  info_.library_path = lib_->path();
  info_.demo = options_.demo;
  info_.missing_symbols = lib_->missing_symbols();
  for (const Probe& p : DeviceProbes()) info_.device_calls.emplace_back(p.call);
}

NvmlBackend::~NvmlBackend() {
  for (DeviceState& d : devices_) CloseStreams(*lib_, d.streams);
  for (auto& gpu : mig_states_) {
    for (auto& [m, d] : gpu) CloseStreams(*lib_, d.streams);
  }
  if (options_.shutdown_on_close && lib_->api().nvmlShutdown != nullptr) lib_->api().nvmlShutdown();
}

HostFields NvmlBackend::ReadHost() {
  const DriverCallScope scope("reading the driver and CUDA versions");
  HostFields h;
  const Api& api = lib_->api();
  auto text = [&](auto fn, std::string_view call, FieldId id) {
    if (fn == nullptr) {
      h[id] = MissingSymbol(call);
      return;
    }
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    const nvmlReturn_t rc = fn(buf, sizeof buf);
    h[id] = rc == NVML_SUCCESS ? Reading::Text(buf) : AbsentFor(*lib_, call, rc);
  };
  text(api.nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion", FieldId::kDriverVersion);
  text(api.nvmlSystemGetNVMLVersion, "nvmlSystemGetNVMLVersion", FieldId::kNvmlVersion);
  auto cuda = api.nvmlSystemGetCudaDriverVersion_v2 != nullptr
                  ? api.nvmlSystemGetCudaDriverVersion_v2
                  : api.nvmlSystemGetCudaDriverVersion;
  int version = 0;
  const nvmlReturn_t rc = cuda != nullptr ? cuda(&version) : NVML_ERROR_FUNCTION_NOT_FOUND;
  if (rc == NVML_SUCCESS) {
    h[FieldId::kCudaDriverVersion] =
        Reading::Text(fmt::format("{}.{}", version / 1000, version % 1000 / 10));
  } else if (rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
    h[FieldId::kCudaDriverVersion] = MissingSymbol("nvmlSystemGetCudaDriverVersion_v2");
  } else {
    h[FieldId::kCudaDriverVersion] = AbsentFor(*lib_, "nvmlSystemGetCudaDriverVersion_v2", rc);
  }
  h[FieldId::kDeviceCount] = Reading::Number(static_cast<double>(devices_.size()));
  return h;
}

void NvmlBackend::MarkLost(DeviceSample& out, const std::string& detail) {
  out.health = DeviceHealth::kLost;
  out.health_detail = detail;
  const FieldRange r = RangeOf(Scope::kDevice);
  for (std::size_t i = r.first; i < r.first + r.count; ++i) {
    const auto id = static_cast<FieldId>(i);
    // Identity read before the loss stays: it says which GPU was lost.
    const Cadence c = Info(id).cadence;
    if (c == Cadence::kStatic && out.fields[id].ok()) continue;
    out.fields[id] = Reading::Absent(Missing::kDeviceLost, detail);
  }
  out.processes.clear();
}

void NvmlBackend::ReadDevice(int index, const FieldMask& which, bool processes, DeviceSample& out) {
  const DriverCallScope scope(fmt::format("reading GPU {}", index));
  out.index = index;
  out.fields[FieldId::kIndex] = Reading::Number(index);
  if (index < 0 || index >= DeviceCount()) {
    out.health = DeviceHealth::kError;
    out.health_detail = fmt::format("no GPU with index {}", index);
    return;
  }
  DeviceState& state = devices_[static_cast<std::size_t>(index)];
  if (state.handle == nullptr || state.lost) {
    // Re-probe: a lost GPU may come back (driver recovery, or a flaky link).
    nvmlDevice_t handle = nullptr;
    const nvmlReturn_t rc = HandleByIndex(lib_->api(), static_cast<unsigned>(index), &handle);
    if (rc != NVML_SUCCESS) {
      MarkLost(out, fmt::format("nvmlDeviceGetHandleByIndex_v2: {}", lib_->ErrorString(rc)));
      return;
    }
    state.handle = handle;
  }
  ReadFields(state, which, out);
  if (state.lost) return;
  if (processes) ReadProcesses(state, out);
}

void NvmlBackend::ReadFields(DeviceState& state, const FieldMask& which, DeviceSample& out) {
  const auto probes = DeviceProbes();
  const auto now = Clock::now();
  ProbeContext ctx{*lib_, state.handle, out.fields, state.streams};
  bool any_answer = false;
  for (std::size_t p = 0; p < probes.size(); ++p) {
    const Probe& probe = probes[p];
    if (!Wants(which, probe)) continue;
    if (auto it = state.unsupported.find(p); it != state.unsupported.end()) {
      if (now < it->second) {
        for (FieldId id : probe.Fields()) out.fields[id] = state.unsupported_reading[p];
        continue;
      }
      state.unsupported.erase(it);
    }
    const nvmlReturn_t rc = probe.read(ctx);
    if (rc == NVML_SUCCESS) {
      any_answer = true;
      continue;
    }
    if (rc == NVML_ERROR_GPU_IS_LOST) {
      state.lost = true;
      MarkLost(out, fmt::format("{}: {}", probe.call, lib_->ErrorString(rc)));
      return;
    }
    const Reading absent = rc == NVML_ERROR_FUNCTION_NOT_FOUND ? MissingSymbol(probe.call)
                                                               : AbsentFor(*lib_, probe.call, rc);
    for (FieldId id : probe.Fields()) out.fields[id] = absent;
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
      // A failing unsupported call costs ~160 us on an H200: skip it for a while.
      state.unsupported[p] = now + options_.unsupported_reprobe;
      state.unsupported_reading[p] = absent;
    }
  }
  if (any_answer || state.lost) {
    state.lost = false;
    out.health = DeviceHealth::kOk;
    out.health_detail.clear();
  }
  RejectImplausible(out.fields);
}

void NvmlBackend::ReadProcesses(DeviceState& state, DeviceSample& out) {
  std::vector<ProcessSample> list;
  const nvmlReturn_t rc = ReadProcessList(*lib_, state.handle, state.process_capacity, list);
  if (rc == NVML_ERROR_GPU_IS_LOST) {
    state.lost = true;
    MarkLost(out,
             fmt::format("nvmlDeviceGetComputeRunningProcesses_v3: {}", lib_->ErrorString(rc)));
    return;
  }
  ReadProcessUtilization(*lib_, state.handle, state.util_last_seen_us, options_.process_util_window,
                         list);
  for (auto& p : list) RejectImplausible(p.fields);
  out.processes = std::move(list);
}

std::vector<DeviceSample> NvmlBackend::ReadMigDevices(int index, const FieldMask& which,
                                                      bool processes) {
  const DriverCallScope scope(fmt::format("reading the MIG devices of GPU {}", index));
  std::vector<DeviceSample> out;
  if (index < 0 || index >= DeviceCount()) return out;
  DeviceState& parent = devices_[static_cast<std::size_t>(index)];
  const Api& api = lib_->api();
  if (parent.handle == nullptr || parent.lost || api.nvmlDeviceGetMaxMigDeviceCount == nullptr ||
      api.nvmlDeviceGetMigDeviceHandleByIndex == nullptr) {
    return out;
  }
  unsigned current = 0, pending = 0;
  if (api.nvmlDeviceGetMigMode == nullptr ||
      api.nvmlDeviceGetMigMode(parent.handle, &current, &pending) != NVML_SUCCESS || current == 0) {
    return out;
  }
  unsigned max_count = 0;
  if (api.nvmlDeviceGetMaxMigDeviceCount(parent.handle, &max_count) != NVML_SUCCESS) return out;
  for (unsigned m = 0; m < max_count; ++m) {
    nvmlDevice_t handle = nullptr;
    if (api.nvmlDeviceGetMigDeviceHandleByIndex(parent.handle, m, &handle) != NVML_SUCCESS)
      continue;
    DeviceState& state = mig_states_[static_cast<std::size_t>(index)][static_cast<int>(m)];
    state.handle = handle;
    state.lost = false;
    DeviceSample mig;
    mig.index = index;
    mig.mig_index = static_cast<int>(m);
    mig.fields[FieldId::kIndex] = Reading::Number(index);
    unsigned id = 0;
    if (api.nvmlDeviceGetGpuInstanceId != nullptr &&
        api.nvmlDeviceGetGpuInstanceId(handle, &id) == NVML_SUCCESS)
      mig.gpu_instance_id = id;
    if (api.nvmlDeviceGetComputeInstanceId != nullptr &&
        api.nvmlDeviceGetComputeInstanceId(handle, &id) == NVML_SUCCESS)
      mig.compute_instance_id = id;
    ReadFields(state, which, mig);
    if (processes && !state.lost) ReadProcesses(state, mig);
    out.push_back(std::move(mig));
  }
  return out;
}

}  // namespace gpuwatch::nvml
