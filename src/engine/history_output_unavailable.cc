// HistoryOutput::Open for gpuwatch-top, which writes no history: linked in
// place of history_output.cc, so that it starts without SQLite. Reached only
// if a caller forgets that (top's pipeline has no --db).
#include "engine/history_output.h"

namespace gpuwatch::engine {

Result<std::unique_ptr<HistoryOutput>> HistoryOutput::Open(const std::string& path, Warn) {
  return Status::Unavailable(path +
                             ": a SQLite history; this gpuwatch binary writes none "
                             "(gpuwatch-full, beside it, does)");
}

}  // namespace gpuwatch::engine
