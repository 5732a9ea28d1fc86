// DeviceReaders: one thread per GPU, so a GPU whose driver call hangs holds
// back only itself. Each round asks every GPU whose previous read has
// finished for a new one and waits, up to a deadline, for those reads; a GPU
// still in a call at the deadline keeps its last values, marked stale, and is
// not asked again until that call returns. Whether the other GPUs go on
// answering is the driver's business: NVML serialises some calls internally,
// and then they wait too.
//
// Needs a backend whose ReadDevice / ReadMigDevices may run for different
// GPUs at once (NvmlBackend: each GPU's state is its own). Every reader holds
// the backend, so one left in a hung call keeps it alive and ends on its own.
// Read() is called by one thread at a time.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <vector>

#include "gpuwatch/backend.h"
#include "gpuwatch/snapshot.h"
#include "sampler/collect.h"

namespace gpuwatch {

class DeviceReaders {
 public:
  DeviceReaders(std::shared_ptr<Backend> backend, int count, bool processes);
  // Ends the idle readers; one in a hung call is left to end on its own.
  ~DeviceReaders();
  DeviceReaders(const DeviceReaders&) = delete;
  DeviceReaders& operator=(const DeviceReaders&) = delete;

  struct Gpu {
    DeviceSample device;  // a copy of the reader's own, which keeps fields not read this round
    std::vector<DeviceSample> mig;
    bool fresh = false;  // read this round; otherwise the last values, still in a call
    std::chrono::steady_clock::duration in_call{};  // how long that call has run
  };

  // Reads every GPU not still in a call, GPU i with `fields[i]`, and waits
  // for them until `deadline` or `stop`. One entry per GPU, in index order.
  std::vector<Gpu> Read(const std::vector<FieldMask>& fields, const FieldMask& mig_fields,
                        std::chrono::steady_clock::time_point deadline, std::stop_token stop);

  struct Shared;  // with the reader threads

 private:
  const int count_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace gpuwatch
