// The device probes: each is one NVML call (or a fixed few) and the catalogue
// fields it fills. The backend runs the probes whose fields are asked for,
// caches the ones a device does not support, and stops at GPU_IS_LOST.
#pragma once

#include <array>
#include <span>
#include <string_view>

#include "backends/nvml/nvml_library.h"
#include "backends/nvml/nvml_streams.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::nvml {

struct ProbeContext {
  const NvmlLibrary& lib;
  nvmlDevice_t device;
  DeviceFields& out;
  DeviceStreams& streams;
};

struct Probe {
  std::string_view call;  // the NVML entry point named in errors
  std::array<FieldId, 6> fields;
  std::size_t field_count;
  // Returns NVML_SUCCESS after filling its fields, or the failing code (the
  // backend then marks all of the probe's fields absent with that reason).
  // NVML_ERROR_FUNCTION_NOT_FOUND means the symbol is missing.
  nvmlReturn_t (*read)(ProbeContext&);

  std::span<const FieldId> Fields() const { return {fields.data(), field_count}; }
};

std::span<const Probe> DeviceProbes();

}  // namespace gpuwatch::nvml
