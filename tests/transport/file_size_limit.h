// A short write on demand: while a FileSizeLimit lives, this process may not
// make a file larger than `bytes` (RLIMIT_FSIZE, SIGXFSZ ignored), so a
// write that crosses the limit is cut there and the next one fails with
// EFBIG, as a disk that fills up mid-line cuts a write and then fails with
// ENOSPC. Process-wide: one at a time, restored on destruction.
#pragma once

#include <signal.h>
#include <sys/resource.h>

#include <cstdint>

namespace gpuwatch::testing {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(std::uintmax_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limited = saved_;
    limited.rlim_cur = static_cast<rlim_t>(bytes);
    ok_ = setrlimit(RLIMIT_FSIZE, &limited) == 0;
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  sighandler_t old_handler_ = SIG_DFL;
  bool ok_ = false;
};

}  // namespace gpuwatch::testing
