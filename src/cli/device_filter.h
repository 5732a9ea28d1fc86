// `--id` / `-i`: which GPUs a command shows. Accepts indices, UUIDs (or a
// unique prefix) and PCI bus ids, comma-separated, as nvidia-smi does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuwatch/fields.h"
#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"

namespace gpuwatch::cli {

// Indices into snapshot.devices, in the order given; all when `spec` is empty.
Result<std::vector<std::size_t>> SelectDevices(std::string_view spec, const Snapshot& snapshot);
// The fields SelectDevices reads to match `spec`: none for indices alone,
// the UUID and PCI bus id when an entry is anything else. A command reading
// only what it shows adds these to what it reads.
FieldMask FieldsToSelect(std::string_view spec);

}  // namespace gpuwatch::cli
