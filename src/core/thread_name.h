// Names the calling thread as `top -H`, `ps -L`, gdb and /proc/PID/task/*/comm
// show it ("gw-sampler", "gw-reader0"): which of a daemon's threads is
// which, and which is the driver's own. Linux keeps 15 bytes; the rest is cut.
#pragma once

#include <string_view>

namespace gpuwatch {

void NameThisThread(std::string_view name);

}  // namespace gpuwatch
