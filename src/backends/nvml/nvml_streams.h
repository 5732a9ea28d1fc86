// The probes that read a stream rather than a value: the driver's sample
// buffers (power every ~20 ms, utilization every ~1/6 s), read from where the
// previous read stopped (lastSeenTimeStamp), and XID critical-error events,
// drained from an event set without waiting. Each keeps its place in
// DeviceStreams, one per device handle.
#pragma once

#include <vector>

#include "backends/nvml/nvml_library.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::nvml {

struct DeviceStreams {
  unsigned long long power_last_seen_us = 0;
  unsigned long long gpu_util_last_seen_us = 0;
  std::vector<nvmlSample_t> buffer;  // grown when the driver says it holds more
  nvmlEventSet_t events = nullptr;   // created and registered at the first read
  double xid_total = 0;
  double xid_last = 0;
};

// Each returns NVML_SUCCESS after filling its fields, or the failing code.
// power_draw_peak_watts: the highest power sample since the previous read.
nvmlReturn_t ReadPowerSamples(const NvmlLibrary& lib, nvmlDevice_t device, DeviceStreams& streams,
                              DeviceFields& out);
// utilization_gpu_mean_ratio: the mean utilization sample since the previous read.
nvmlReturn_t ReadUtilizationSamples(const NvmlLibrary& lib, nvmlDevice_t device,
                                    DeviceStreams& streams, DeviceFields& out);
// xid_errors_total and xid_last. The first call creates the event set and
// registers the device; events before that are not seen (NVML keeps none).
nvmlReturn_t ReadXidEvents(const NvmlLibrary& lib, nvmlDevice_t device, DeviceStreams& streams,
                           DeviceFields& out);

// Frees the event set (the backend calls it before nvmlShutdown).
void CloseStreams(const NvmlLibrary& lib, DeviceStreams& streams);

}  // namespace gpuwatch::nvml
