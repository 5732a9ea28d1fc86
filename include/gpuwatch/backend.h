// Backend: the only code that talks to hardware. NvmlBackend (the real one,
// also driven by the fake NVML library in tests and the demo) and
// ReplayBackend (recordings). A backend is called by one thread at a time,
// except that a live one (NextSampleDue() empty) must take ReadDevice and
// ReadMigDevices for different GPUs at once: the sampler reads each GPU on
// its own thread, so that one hung GPU holds back only itself.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuwatch/fields.h"
#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"

namespace gpuwatch {

struct BackendInfo {
  std::string library_path;  // the file actually loaded; a recording's path
  bool demo = false;
  bool recording = false;  // a recording played back (`--replay`), not GPUs read now
  std::vector<std::string> missing_symbols;  // entry points this driver lacks
  // The calls a GPU's sample makes, named as a failed one names itself in a
  // reading's detail ("CALL: reason"); empty for a recording.
  std::vector<std::string> device_calls;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const BackendInfo& info() const = 0;
  virtual HostFields ReadHost() = 0;
  virtual int DeviceCount() const = 0;
  // Reads the fields of `which` for device `index` into `out` (other fields
  // are left as they are), and its processes when `processes` is set. Never
  // fails as a whole: each field carries its own Reading; a lost device is
  // marked in out.health and re-probed on the next call.
  virtual void ReadDevice(int index, const FieldMask& which, bool processes, DeviceSample& out) = 0;
  // A recording's own time for the sample being read (replay); live
  // backends return nothing and the reader stamps the current time.
  virtual std::optional<std::chrono::system_clock::time_point> SampleTime() const {
    return std::nullopt;
  }
  // A recording that has nothing more to play.
  virtual bool Finished() const { return false; }
  // When the next sample is due, for a backend that keeps its own clock (a
  // recording): a time at or before now (time_point::min() included) means
  // at once. Such a backend plays each of its samples exactly once, one per
  // round of reads, and can be made to wait: the sampler reads it at these
  // times instead of at its interval and holds back for readers that take
  // every snapshot. Live backends return nothing: the sampler's interval
  // paces them and nothing waits for a reader.
  virtual std::optional<std::chrono::steady_clock::time_point> NextSampleDue() const {
    return std::nullopt;
  }
  // The MIG devices of GPU `index` (empty when MIG is off).
  virtual std::vector<DeviceSample> ReadMigDevices(int index, const FieldMask& which,
                                                   bool processes) = 0;
};

}  // namespace gpuwatch
