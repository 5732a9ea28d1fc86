// Process lists and per-process utilization of one device.
#pragma once

#include <chrono>
#include <vector>

#include "backends/nvml/nvml_library.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::nvml {

// Compute and graphics processes (_v3 -> _v2 -> v1), merged by pid. Retries
// with a larger buffer on INSUFFICIENT_SIZE (the list can grow between the
// size query and the read). `capacity` is remembered between calls. Returns
// the first failing code when neither list could be read.
nvmlReturn_t ReadProcessList(const NvmlLibrary& lib, nvmlDevice_t device, std::size_t& capacity,
                             std::vector<ProcessSample>& out);

// Fills the utilization fields of `processes` from samples newer than
// `last_seen_us` (updated) and not older than `window`; values over 100 % are
// rejected by the plausibility check. Processes without a sample get
// Missing::kNotYetSampled, or the call's error.
void ReadProcessUtilization(const NvmlLibrary& lib, nvmlDevice_t device,
                            unsigned long long& last_seen_us, std::chrono::seconds window,
                            std::vector<ProcessSample>& processes);

}  // namespace gpuwatch::nvml
