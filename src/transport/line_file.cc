#include "transport/line_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/mutex.h"
#include "core/thread_name.h"

namespace gpuwatch {
namespace {

// True when `fd` is a regular file that is not empty and does not end in a
// newline (a writer before us stopped part-way). False when it cannot tell.
bool EndsInPartialLine(const std::string& path, int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return false;
  // `fd` is write-only: read the last byte through a second descriptor of
  // the same file.
  const int rd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (rd < 0) return false;
  struct stat same {};
  const bool same_file = fstat(rd, &same) == 0 && same.st_dev == st.st_dev &&
                         same.st_ino == st.st_ino && same.st_size > 0;
  char last = '\n';
  if (!same_file || pread(rd, &last, 1, same.st_size - 1) != 1) last = '\n';
  close(rd);
  return last != '\n';
}

}  // namespace

Result<std::unique_ptr<LineFile>> LineFile::Open(const std::string& path, ErrorHandler on_error,
                                                 std::size_t max_queued) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0) {
    return Status::PermissionDenied(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  const bool partial_tail = EndsInPartialLine(path, fd);
  return std::unique_ptr<LineFile>(
      new LineFile(fd, partial_tail, path, std::move(on_error), max_queued));
}

LineFile::LineFile(int fd, bool partial_tail, std::string path, ErrorHandler on_error,
                   std::size_t max_queued)
    : fd_(fd),
      path_(std::move(path)),
      on_error_(std::move(on_error)),
      max_queued_(max_queued),
      partial_tail_(partial_tail) {
  writer_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

LineFile::~LineFile() { Close(); }

void LineFile::Write(std::string line) {
  MutexLock lock(mu_);
  if (closed_) return;
  line += '\n';
  queue_.push_back(std::move(line));
  while (queue_.size() > max_queued_) {
    queue_.pop_front();
    ++dropped_;
  }
  cv_.NotifyAll();
}

void LineFile::Flush() {
  MutexLock lock(mu_);
  cv_.NotifyAll();
  cv_.Wait(lock, [&]() REQUIRES(mu_) {
    return (queue_.empty() && pending_ == 0) || !writer_.joinable();
  });
}

void LineFile::Close() {
  {
    MutexLock lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  writer_.request_stop();
  cv_.NotifyAll();
  if (writer_.joinable()) writer_.join();
  close(fd_);
}

std::uint64_t LineFile::dropped() const {
  MutexLock lock(mu_);
  return dropped_;
}

std::uint64_t LineFile::failed_writes() const {
  MutexLock lock(mu_);
  return failed_;
}

void LineFile::Run(std::stop_token stop) {
  NameThisThread("gw-writer");
  std::vector<std::string> batch;
  while (true) {
    {
      MutexLock lock(mu_);
      cv_.Wait(lock, [&]() REQUIRES(mu_) { return !queue_.empty() || stop.stop_requested(); });
      if (queue_.empty() && stop.stop_requested()) return;
      batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
      queue_.clear();
      pending_ = batch.size();
    }
    std::string error;
    const std::size_t whole = Append(batch, error);
    const bool ok = whole == batch.size();
    bool report = false;
    {
      MutexLock lock(mu_);
      pending_ = 0;
      if (!ok) {
        failed_ += batch.size() - whole;
        report = !failing_;  // say it once per failing stretch
        failing_ = true;
      } else {
        failing_ = false;
      }
      cv_.NotifyAll();
    }
    if (report && on_error_) {
      on_error_(fmt::format("writing {} failed ({}); lines are dropped until writing works again",
                            path_, error));
    }
  }
}

std::size_t LineFile::Append(const std::vector<std::string>& batch, std::string& error) {
  std::string out;
  if (partial_tail_) out += '\n';
  const std::size_t lead = out.size();
  for (const auto& line : batch) out += line;
  std::size_t done = 0;  // bytes of `out` in the file
  while (done < out.size()) {
    const ssize_t n = write(fd_, out.data() + done, out.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      error = n < 0 ? std::strerror(errno) : "the file takes no more bytes";
      break;
    }
  }
  if (done == out.size()) {
    partial_tail_ = false;
    return batch.size();
  }
  // A short write (disk full, file size limit): the lines it took whole stay.
  std::size_t end = 0;  // where the whole lines end in `out`
  std::size_t whole = 0;
  if (done >= lead) {
    end = lead;
    while (whole < batch.size() && end + batch[whole].size() <= done) end += batch[whole++].size();
  }
  if (done > end) {
    // Cut the piece of the next line off again. O_APPEND leaves the offset
    // just past the bytes this write added, even if the file grew meanwhile.
    const off_t at = lseek(fd_, 0, SEEK_CUR);
    const auto piece = static_cast<off_t>(done - end);
    partial_tail_ = !(at >= piece && ftruncate(fd_, at - piece) == 0);
  } else if (done > 0) {
    partial_tail_ = false;  // it ends with a whole line (or the newline the last write needed)
  }
  return whole;
}

}  // namespace gpuwatch
