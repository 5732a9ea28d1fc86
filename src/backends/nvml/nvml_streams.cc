#include "backends/nvml/nvml_streams.h"

#include <algorithm>
#include <span>

namespace gpuwatch::nvml {
namespace {

constexpr std::size_t kInitialBuffer = 256;  // more than any driver buffer seen so far
constexpr int kMaxEventsPerRead = 1024;      // a storm of events must not stall a sample

double AsDouble(int type, const nvmlValue_t& v) {
  switch (type) {
    case NVML_VALUE_TYPE_DOUBLE:
      return v.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return v.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(v.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(v.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(v.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
      return v.siVal;
    default:
      return v.uiVal;
  }
}

// The samples of `type` newer than `last_seen_us`, which moves to the newest.
// NVML_ERROR_NOT_FOUND when there is none.
nvmlReturn_t FetchSamples(const NvmlLibrary& lib, nvmlDevice_t device, int type,
                          unsigned long long& last_seen_us, DeviceStreams& streams,
                          std::vector<double>& values) {
  auto fn = lib.api().nvmlDeviceGetSamples;
  if (fn == nullptr) return NVML_ERROR_FUNCTION_NOT_FOUND;
  if (streams.buffer.empty()) streams.buffer.resize(kInitialBuffer);
  int value_type = 0;
  auto count = static_cast<unsigned>(streams.buffer.size());
  nvmlReturn_t rc = fn(device, type, last_seen_us, &value_type, &count, streams.buffer.data());
  if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
    // Ask how many, then read them all (the driver's buffer is larger than ours).
    rc = fn(device, type, last_seen_us, &value_type, &count, nullptr);
    if (rc != NVML_SUCCESS) return rc;
    streams.buffer.resize(std::max<std::size_t>(count, streams.buffer.size() * 2));
    count = static_cast<unsigned>(streams.buffer.size());
    rc = fn(device, type, last_seen_us, &value_type, &count, streams.buffer.data());
  }
  if (rc != NVML_SUCCESS) return rc;
  values.clear();
  unsigned long long newest = last_seen_us;
  for (const nvmlSample_t& s :
       std::span(streams.buffer).first(std::min<std::size_t>(count, streams.buffer.size()))) {
    if (s.timeStamp <= last_seen_us) continue;  // some drivers repeat the last one
    values.push_back(AsDouble(value_type, s.sampleValue));
    newest = std::max(newest, s.timeStamp);
  }
  last_seen_us = newest;
  return values.empty() ? NVML_ERROR_NOT_FOUND : NVML_SUCCESS;
}

// Runs FetchSamples and stores `reduce(values) / divisor` in `id`; no new
// sample is "not yet sampled" for this read, not an error.
template <typename Reduce>
nvmlReturn_t ReadSamples(const NvmlLibrary& lib, nvmlDevice_t device, int type,
                         unsigned long long& last_seen_us, DeviceStreams& streams, FieldId id,
                         double divisor, DeviceFields& out, Reduce reduce) {
  std::vector<double> values;
  const nvmlReturn_t rc = FetchSamples(lib, device, type, last_seen_us, streams, values);
  if (rc == NVML_ERROR_NOT_FOUND) {
    out[id] = Reading::Absent(Missing::kNotYetSampled, "no driver sample since the previous read");
    return NVML_SUCCESS;
  }
  if (rc == NVML_SUCCESS) out[id] = Reading::Number(reduce(values) / divisor);
  return rc;
}

}  // namespace

nvmlReturn_t ReadPowerSamples(const NvmlLibrary& lib, nvmlDevice_t device, DeviceStreams& streams,
                              DeviceFields& out) {
  return ReadSamples(lib, device, NVML_TOTAL_POWER_SAMPLES, streams.power_last_seen_us, streams,
                     FieldId::kPowerDrawPeakWatts, 1000.0, out, [](const std::vector<double>& v) {
                       return *std::max_element(v.begin(), v.end());
                     });
}

nvmlReturn_t ReadUtilizationSamples(const NvmlLibrary& lib, nvmlDevice_t device,
                                    DeviceStreams& streams, DeviceFields& out) {
  return ReadSamples(lib, device, NVML_GPU_UTILIZATION_SAMPLES, streams.gpu_util_last_seen_us,
                     streams, FieldId::kUtilizationGpuMeanRatio, 100.0, out,
                     [](const std::vector<double>& v) {
                       double sum = 0;
                       for (double x : v) sum += x;
                       return sum / static_cast<double>(v.size());
                     });
}

nvmlReturn_t ReadXidEvents(const NvmlLibrary& lib, nvmlDevice_t device, DeviceStreams& streams,
                           DeviceFields& out) {
  const Api& api = lib.api();
  if (api.nvmlEventSetCreate == nullptr || api.nvmlDeviceRegisterEvents == nullptr ||
      api.nvmlEventSetWait_v2 == nullptr || api.nvmlEventSetFree == nullptr) {
    return NVML_ERROR_FUNCTION_NOT_FOUND;
  }
  if (streams.events == nullptr) {
    nvmlEventSet_t set = nullptr;
    nvmlReturn_t rc = api.nvmlEventSetCreate(&set);
    if (rc != NVML_SUCCESS) return rc;
    rc = api.nvmlDeviceRegisterEvents(device, nvmlEventTypeXidCriticalError, set);
    if (rc != NVML_SUCCESS) {
      api.nvmlEventSetFree(set);
      return rc;
    }
    streams.events = set;
  }
  for (int i = 0; i < kMaxEventsPerRead; ++i) {
    nvmlEventData_t data{};
    const nvmlReturn_t rc = api.nvmlEventSetWait_v2(streams.events, &data, 0);
    if (rc == NVML_ERROR_TIMEOUT) break;  // drained
    if (rc != NVML_SUCCESS) return rc;
    if ((data.eventType & nvmlEventTypeXidCriticalError) == 0) continue;
    streams.xid_total += 1;
    streams.xid_last = static_cast<double>(data.eventData);
  }
  out[FieldId::kXidErrorsTotal] = Reading::Number(streams.xid_total);
  out[FieldId::kXidLast] = Reading::Number(streams.xid_last);
  return NVML_SUCCESS;
}

void CloseStreams(const NvmlLibrary& lib, DeviceStreams& streams) {
  if (streams.events != nullptr && lib.api().nvmlEventSetFree != nullptr) {
    lib.api().nvmlEventSetFree(streams.events);
  }
  streams.events = nullptr;
}

}  // namespace gpuwatch::nvml
