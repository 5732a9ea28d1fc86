// The line protocol a training process speaks to `gpuwatch run` over
// GPUWATCH_SOCKET (docs/run.md). One message per line, a verb then key=value
// tokens separated by spaces:
//   hello framework=torch version=2.11.0 pid=1234
//   mem framework=torch device=0 uuid=GPU-8f0c... allocated=1073741824 reserved=2147483648 ...
//   mark step=1200          mark epoch=3          mark phase=eval
// Sizes are bytes; `device` is the framework's (CUDA's) index, `uuid` (optional)
// the device's UUID, which names the GPU whatever CUDA_VISIBLE_DEVICES and
// CUDA's device order did to the index. Unknown keys are kept (newer
// clients), unknown verbs are errors. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "gpuwatch/status.h"

namespace gpuwatch {

struct JobMessage {
  enum class Kind { kHello, kMemory, kMark };
  Kind kind = Kind::kHello;
  std::map<std::string, std::string, std::less<>> fields;

  // kMark: which mark (step, epoch, phase) and its value.
  std::string mark;
  std::string mark_value;
  // kMemory: framework, device and its byte counters (allocated, reserved, ...).
  std::string framework;
  int device = 0;
  std::string uuid;  // the device's, when the sender knows it
  std::map<std::string, double, std::less<>> bytes;
  std::optional<std::uint32_t> pid;  // hello / mem: the sender, when it says
};

inline constexpr std::size_t kMaxJobLine = 4096;

Result<JobMessage> ParseJobMessage(std::string_view line);

}  // namespace gpuwatch
