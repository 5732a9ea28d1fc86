// Reading the GPUs: one GPU's read (the sampler's readers and one-shot reads
// alike), the fields every snapshot starts with, and one full sample of every
// GPU, MIG device and process with host attribution (what one-shot commands
// such as status, query and doctor read).
#pragma once

#include <string>

#include "gpuwatch/backend.h"
#include "gpuwatch/snapshot.h"
#include "host/process_resolver.h"

namespace gpuwatch {

// One GPU's read: its fields, its processes when asked, and its MIG devices
// when MIG is on and `mig_fields` is given (read without processes).
void ReadGpu(Backend& backend, int index, const FieldMask& fields, const FieldMask* mig_fields,
             bool processes, DeviceSample& device, std::vector<DeviceSample>& mig);

// A snapshot before its GPUs are read: its time (now; a recording's own is
// set by FinishSnapshot), demo flag and source.
Snapshot StartSnapshot(const Backend& backend);
// The recorded time of a recording's sample, once it has been read.
void FinishSnapshot(const Backend& backend, Snapshot& snapshot);

struct CollectOptions {
  FieldMask fields = AllFields();
  bool processes = true;
  bool mig = true;
};

// Reads everything `options` asks for. A fault in one GPU or process never
// stops the others: each carries its own health and readings.
Snapshot CollectOnce(Backend& backend, host::ProcessResolver* resolver,
                     const CollectOptions& options);

}  // namespace gpuwatch
