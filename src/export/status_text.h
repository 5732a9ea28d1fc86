// The human status view: one block per GPU and its processes, and who holds
// or waits for GPUs (leases). Pure: the caller decides colour (TTY) and passes
// the hostname, the lease table and the time.
#pragma once

#include <chrono>
#include <string>

#include "gpuwatch/snapshot.h"
#include "host/leases.h"

namespace gpuwatch {

struct StatusTextOptions {
  bool color = false;
  bool processes = true;
  std::string hostname;
  std::string demo_source;    // scenario shown in the DEMO banner
  std::string replay_source;  // recording shown in the REPLAY banner
  int command_width = 60;     // command column is cut to this many characters
  int width = 0;              // the compact view's lines are cut to this; 0: not cut
  // GPU leases (docs/select.md): a line under each GPU and MIG device one
  // names (by UUID), and the wait queue after the GPUs. Ages count to `now`.
  host::LeaseTable leases;
  std::chrono::system_clock::time_point now;
};

std::string RenderStatus(const Snapshot& snapshot, const StatusTextOptions& options);
// The fields the two views below show, and all a one-shot status needs to
// read: fewer driver calls than every field (the sample buffers, ECC and
// PCIe counters are not shown; `gpuwatch --json` reads them).
FieldMask StatusTextFields();
// The same in one line per GPU (as gpustat): temperature, utilization, power,
// memory, what holds its clocks down, its lease, and who holds its memory
// (largest first, as many as fit `options.width`, then "+N"). A lost or stale
// GPU says so on its line; the lease queue follows as in the full view.
std::string RenderCompactStatus(const Snapshot& snapshot, const StatusTextOptions& options);

// "sw thermal slowdown, hw thermal slowdown"; "" when none (idle is not a limit).
std::string DescribeClockEventReasons(unsigned long long mask);
// "thermal", "power cap, thermal": the same in the compact view's words.
std::string BriefClockEventReasons(unsigned long long mask);
// "92.6 GiB", "512 MiB"
std::string HumanBytes(double bytes);
// "45s", "2m 10s", "3h 5m", "2d 4h"; a negative duration (clock skew) is "0s".
std::string HumanDuration(std::chrono::system_clock::duration d);

}  // namespace gpuwatch
