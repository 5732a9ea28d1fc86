// LineFile: appends text lines to a file from a writer thread, so the caller
// (the sampler's consumer) never waits on the disk. Bounded: when the queue is
// full the oldest lines are dropped and counted. A write error (disk full) is
// reported once through `on_error` and writing resumes when it can; nothing
// already written is lost. The file only ever holds whole lines: a line the
// disk took part of is cut off again (ftruncate), and where that cannot be
// done (not a regular file) the next write starts with a newline, so the
// piece stays on a line of its own, as it does when the file already ended
// in one at Open(). Close() (and the destructor) writes what is queued.
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "gpuwatch/status.h"

namespace gpuwatch {

class LineFile {
 public:
  using ErrorHandler = std::function<void(const std::string&)>;
  // Opens (creates, appends) `path` now, so an unwritable path fails before
  // anything starts.
  static Result<std::unique_ptr<LineFile>> Open(const std::string& path, ErrorHandler on_error,
                                                std::size_t max_queued = 100'000);
  ~LineFile();
  LineFile(const LineFile&) = delete;
  LineFile& operator=(const LineFile&) = delete;

  void Write(std::string line);  // a newline is added
  void Flush();                  // returns when everything queued is on disk (or failed)
  void Close();
  std::uint64_t dropped() const;
  std::uint64_t failed_writes() const;

 private:
  LineFile(int fd, bool partial_tail, std::string path, ErrorHandler on_error,
           std::size_t max_queued);
  void Run(std::stop_token stop);
  // Writes `batch` (lines with their newlines) at the end of the file and
  // returns how many of them are there whole; `error` says why not all.
  std::size_t Append(const std::vector<std::string>& batch, std::string& error);

  const int fd_;  // opened O_APPEND
  const std::string path_;
  const ErrorHandler on_error_;
  const std::size_t max_queued_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  std::uint64_t dropped_ GUARDED_BY(mu_) = 0;
  std::uint64_t failed_ GUARDED_BY(mu_) = 0;
  std::uint64_t pending_ GUARDED_BY(mu_) = 0;  // taken off the queue, not yet written
  bool failing_ GUARDED_BY(mu_) = false;
  bool closed_ GUARDED_BY(mu_) = false;
  // The file ends in part of a line: the next write starts with a newline.
  // Set by the constructor, then used by the writer thread alone.
  bool partial_tail_;
  std::jthread writer_;
};

}  // namespace gpuwatch
