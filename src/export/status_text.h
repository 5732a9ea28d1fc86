// The human status view: one block per GPU and its processes. Pure: the
// caller decides colour (TTY) and passes the hostname.
#pragma once

#include <string>

#include "gpuwatch/snapshot.h"

namespace gpuwatch {

struct StatusTextOptions {
  bool color = false;
  bool processes = true;
  std::string hostname;
  std::string demo_source;    // scenario shown in the DEMO banner
  std::string replay_source;  // recording shown in the REPLAY banner
  int command_width = 60;     // command column is cut to this many characters
};

std::string RenderStatus(const Snapshot& snapshot, const StatusTextOptions& options);

// "sw thermal slowdown, hw thermal slowdown"; "" when none (idle is not a limit).
std::string DescribeClockEventReasons(unsigned long long mask);
// "92.6 GiB", "512 MiB"
std::string HumanBytes(double bytes);

}  // namespace gpuwatch
