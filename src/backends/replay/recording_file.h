// A recording file opened for reading: a regular file only, so `--replay
// /dev/zero` or a FIFO is an error naming the path instead of a reader that
// fills its memory or waits forever. Lines are at most kMaxLineBytes, so a
// file without newlines cannot fill memory either. Recordings may be large:
// the file itself has no size limit. One owner thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpuwatch/status.h"

namespace gpuwatch::replay {

// Ok when `path` is a regular file; kNotFound when it cannot be read,
// kInvalidArgument naming what it is otherwise (a directory, a FIFO, ...).
Status CheckRecordingFile(const std::string& path);

class RecordingFile {
 public:
  // The longest line a recording may hold; a sample line of 64 GPUs with
  // their processes is well under 1 MiB.
  static constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;

  // CheckRecordingFile, then opens it without waiting (a path that has
  // become a FIFO since is refused, not waited on).
  static Result<RecordingFile> Open(const std::string& path);
  RecordingFile(RecordingFile&& other) noexcept;
  RecordingFile& operator=(RecordingFile&&) = delete;
  RecordingFile(const RecordingFile&) = delete;
  RecordingFile& operator=(const RecordingFile&) = delete;
  ~RecordingFile();

  // Up to `bytes` from the start of the file, wherever reading is.
  Result<std::string> Head(std::size_t bytes);
  // The next line without its newline (a last line without one included);
  // false at the end of the file. A line longer than kMaxLineBytes is an
  // error naming path:line.
  Result<bool> NextLine(std::string& line);
  // The number of the line NextLine gave last, from 1.
  int line_number() const { return line_number_; }

 private:
  RecordingFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  // Reads more into buffer_; false at the end of the file.
  Result<bool> Fill();

  int fd_;
  std::string path_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;  // buffer_[begin_, end_) is read but not yet given out
  std::size_t end_ = 0;
  int line_number_ = 0;
};

}  // namespace gpuwatch::replay
