// DeviceReaders: the threads that read live GPUs, so that a GPU whose driver
// call hangs holds back only itself, without a thread per GPU.
//
// Each round queues every GPU whose previous read has finished and waits, up
// to a deadline, for those reads. One reader takes the queue in turn; a read
// that has run longer than `stall_after` while GPUs still wait in the queue
// (a slow or hung call) brings another reader in, an idle one or a new one.
// A GPU still in a call at the deadline keeps its last values, marked stale,
// and is not queued again until that call returns; a GPU still queued at the
// deadline (no reader reached it) is taken out and read next round. So an
// idle daemon runs one reader whatever the number of GPUs, plus one for each
// call that never returns; a reader idle for `idle_exit` ends while another
// is idle too. Whether the other GPUs go on answering is the driver's
// business: NVML serialises some calls internally, and then they wait too.
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

struct ReaderTiming {
  // A read running this long with GPUs waiting behind it brings in another reader.
  std::chrono::milliseconds stall_after{100};
  // A reader idle this long ends, unless it is the only idle one.
  std::chrono::milliseconds idle_exit{10000};
};

class DeviceReaders {
 public:
  DeviceReaders(std::shared_ptr<Backend> backend, int count, bool processes,
                ReaderTiming timing = {});
  // Ends the idle readers; one in a hung call is left to end on its own.
  ~DeviceReaders();
  DeviceReaders(const DeviceReaders&) = delete;
  DeviceReaders& operator=(const DeviceReaders&) = delete;

  struct Gpu {
    DeviceSample device;  // a copy of the reader's own, which keeps fields not read this round
    std::vector<DeviceSample> mig;
    bool fresh = false;  // read this round; otherwise the last values, still in a call
    std::chrono::steady_clock::duration in_call{};  // how long that call has run (or waited)
  };

  // Reads every GPU not still in a call, GPU i with `fields[i]`, and waits
  // for them until `deadline` or `stop`. One entry per GPU, in index order.
  std::vector<Gpu> Read(const std::vector<FieldMask>& fields, const FieldMask& mig_fields,
                        std::chrono::steady_clock::time_point deadline, std::stop_token stop);

  // Reader threads running now (idle, reading, or in a call that has not returned).
  int threads() const;

  struct Shared;  // with the reader threads

 private:
  const int count_;
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace gpuwatch
