// Realistic defaults per model family (H200, H100, A100 80GB/40GB, L40S, and a
// generic fallback), chosen by the device name. The parser starts every device
// from these and overrides what the scenario gives.
#pragma once

#include <string>

#include "scenario.h"

namespace gpuwatch::fake_nvml {

// A device named `name` at position `index`, with every static field set and
// deterministic identity (uuid, serial, bus id) derived from the index.
DeviceSpec DefaultDevice(const std::string& name, unsigned index);

// Default memory of a MIG profile such as "3g.40gb", in bytes.
double MigProfileMemoryBytes(const std::string& profile);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (or "MIG-...") from a seed.
std::string MakeUuid(const char* prefix, std::uint64_t seed);

}  // namespace gpuwatch::fake_nvml
