#include "analysis/sweep/run_verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "core/ascii.h"

namespace gpuwatch::sweep {
namespace {

// What PyTorch, JAX/XLA, TensorFlow and the CUDA runtime print when an
// allocation fails, compared without case.
constexpr std::array<std::string_view, 6> kOomPatterns{
    "cuda out of memory", "outofmemoryerror",         "resource_exhausted",
    "out of memory",      "cuda_error_out_of_memory", "cudaerrormemoryallocation"};

}  // namespace

std::string OomLine(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string_view line(text.data() + start, end - start);
    const std::string lower = AsciiLower(line);
    for (const auto p : kOomPatterns) {
      if (lower.find(p) != std::string::npos) return std::string(line);
    }
    start = end + 1;
  }
  return "";
}

Classified ClassifyRun(const RunEnd& end) {
  if (end.stopped_at_bound) return {RunVerdict::kFits, "ran to its bound"};
  if (!end.exit_status) return {RunVerdict::kFailed, "it did not start"};
  const int status = *end.exit_status;
  if (status == 0) return {RunVerdict::kFits, "finished (exit status 0)"};
  if (end.oom_report) return {RunVerdict::kOom, "out of memory (gpuwatch.torch's OOM report)"};
  if (const std::string line = OomLine(end.stderr_tail); !line.empty()) {
    std::string shown = line.size() > 160 ? line.substr(0, 157) + "..." : line;
    return {RunVerdict::kOom, fmt::format("out of memory: {}", shown)};
  }
  if (status > 128) {
    return {RunVerdict::kFailed, fmt::format("killed by signal {}{}", status - 128,
                                             status == 137 ? " (the kernel's OOM killer frees "
                                                             "host memory this way)"
                                                           : "")};
  }
  return {RunVerdict::kFailed,
          fmt::format("exit status {} without an out-of-memory message", status)};
}

}  // namespace gpuwatch::sweep
