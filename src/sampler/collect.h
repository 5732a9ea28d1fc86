// One full sample of every GPU, MIG device and process, with host attribution:
// what one-shot commands (status, query, doctor) read, and the unit of work the
// sampler thread repeats.
#pragma once

#include <string>

#include "gpuwatch/backend.h"
#include "gpuwatch/snapshot.h"
#include "host/process_resolver.h"

namespace gpuwatch {

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
