// Rejects values no healthy driver can report (utilization over 100 %, more
// memory used than installed, ...): they become Missing::kImplausible with
// the value in the detail, so they are neither shown nor alerted on.
#pragma once

#include "gpuwatch/snapshot.h"

namespace gpuwatch::nvml {

void RejectImplausible(DeviceFields& fields);
void RejectImplausible(ProcessFields& fields);

}  // namespace gpuwatch::nvml
