#include "backends/replay/recording_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "core/text_file.h"

namespace gpuwatch::replay {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 16;

Status CannotRead(const std::string& path, int error) {
  return Status::NotFound(
      fmt::format("cannot read the recording {}: {}", path, std::strerror(error)));
}

}  // namespace

Status CheckRecordingFile(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return CannotRead(path, errno);
  if (S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(
        fmt::format("{} is a directory, not a recording (--jsonl) or a history (--db)", path));
  }
  // Regular files of any size: recordings are not held to the 1 MiB of
  // config files. Says what the path is instead ("a character device").
  return CheckTextFile(path, std::numeric_limits<std::size_t>::max());
}

Result<RecordingFile> RecordingFile::Open(const std::string& path) {
  if (Status s = CheckRecordingFile(path); !s.ok()) return s;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return CannotRead(path, errno);
  RecordingFile file(fd, path);
  struct stat st {};
  if (fstat(fd, &st) != 0) return CannotRead(path, errno);
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(fmt::format("{} is not a regular file", path));
  }
  return file;
}

RecordingFile::RecordingFile(RecordingFile&& other) noexcept
    : fd_(other.fd_),
      path_(std::move(other.path_)),
      buffer_(std::move(other.buffer_)),
      begin_(other.begin_),
      end_(other.end_),
      line_number_(other.line_number_) {
  other.fd_ = -1;
}

RecordingFile::~RecordingFile() {
  if (fd_ >= 0) close(fd_);
}

Result<std::string> RecordingFile::Head(std::size_t bytes) {
  std::string head(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = pread(fd_, head.data() + got, bytes - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return CannotRead(path_, errno);
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  head.resize(got);
  return head;
}

Result<bool> RecordingFile::Fill() {
  if (begin_ > 0) {  // keep the part of a line not given out yet at the front
    std::copy(buffer_.begin() + static_cast<std::ptrdiff_t>(begin_),
              buffer_.begin() + static_cast<std::ptrdiff_t>(end_), buffer_.begin());
    end_ -= begin_;
    begin_ = 0;
  }
  if (buffer_.size() < end_ + kChunkBytes) buffer_.resize(end_ + kChunkBytes);
  for (;;) {
    const ssize_t n = read(fd_, buffer_.data() + end_, kChunkBytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return CannotRead(path_, errno);
    end_ += static_cast<std::size_t>(n);
    return n > 0;
  }
}

Result<bool> RecordingFile::NextLine(std::string& line) {
  std::size_t scanned = begin_;  // no newline in [begin_, scanned)
  for (;;) {
    const auto first = buffer_.begin();
    const auto newline = std::find(first + static_cast<std::ptrdiff_t>(scanned),
                                   first + static_cast<std::ptrdiff_t>(end_), '\n');
    const auto at = static_cast<std::size_t>(newline - first);
    if (at - begin_ > kMaxLineBytes) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: a line longer than {} MiB (is this a --jsonl recording?)", path_,
                      line_number_ + 1, kMaxLineBytes >> 20));
    }
    if (at < end_) {  // a whole line
      line.assign(buffer_.data() + begin_, at - begin_);
      begin_ = at + 1;
      ++line_number_;
      return true;
    }
    scanned = end_ - begin_;  // Fill() moves the unread part to the front
    Result<bool> more = Fill();
    if (!more) return more.error();
    if (!*more) {
      if (begin_ == end_) return false;
      line.assign(buffer_.data() + begin_, end_ - begin_);  // the last line, without a newline
      begin_ = end_;
      ++line_number_;
      return true;
    }
  }
}

}  // namespace gpuwatch::replay
