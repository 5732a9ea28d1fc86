// ReadHistoryRecording for the one-shot front (cli/oneshot_cli.h), which
// leaves --replay to gpuwatch-full: linked in place of history_replay.cc, so
// the front starts without SQLite. Reached only if a caller forgets that.
#include "backends/replay/recording.h"

namespace gpuwatch::replay {

Result<Recording> ReadHistoryRecording(const std::string& path) {
  return Status::Unavailable(path +
                             ": a SQLite history; this gpuwatch binary reads JSON Lines "
                             "recordings only (gpuwatch-full, beside it, reads both)");
}

}  // namespace gpuwatch::replay
