// Events that follow from two consecutive snapshots: a GPU lost or back, a
// process started or ended (by (pid, start time), so a reused pid is an end
// and a start). Pure.
#pragma once

#include <vector>

#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch {

std::vector<Event> LifecycleEvents(const Snapshot* previous, const Snapshot& current);

}  // namespace gpuwatch
