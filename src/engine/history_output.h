// The pipeline's SQLite history (--db), behind a seam: an executable that
// writes no history (gpuwatch-top, src/cli/CMakeLists.txt) links
// history_output_unavailable.cc in place of history_output.cc, and so neither
// the history writer nor SQLite.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"

namespace gpuwatch::engine {

class HistoryOutput {
 public:
  using Warn = std::function<void(const std::string&)>;
  // Opens or creates the history at `path`; fails, naming it, when it cannot be written.
  static Result<std::unique_ptr<HistoryOutput>> Open(const std::string& path, Warn warn);
  virtual ~HistoryOutput() = default;  // writes what is still queued

  virtual void Append(std::shared_ptr<const Snapshot> snapshot) = 0;
  virtual void Append(const Event& event) = 0;
  // A mark from the training process: `kind` step, epoch or phase; `number`
  // when `value` is one, else `value` is its label.
  virtual void AppendMark(std::chrono::system_clock::time_point time, std::string_view kind,
                          std::string_view value, std::optional<double> number) = 0;
};

}  // namespace gpuwatch::engine
