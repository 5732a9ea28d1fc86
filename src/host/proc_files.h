// Reading /proc files without racing the process they describe. Errors are
// values: kNotFound when the file or process is gone (ENOENT, ESRCH),
// kPermissionDenied (EACCES, EPERM), kUnavailable for anything else.
#pragma once

#include <filesystem>
#include <string>

#include "gpuwatch/status.h"

namespace gpuwatch::host {

// Files larger than this are cut (a very long command line is still shown).
inline constexpr std::size_t kMaxProcFileBytes = 1 << 20;

// A handle on one /proc/<pid> directory. Files opened through it belong to the
// process that held the pid when Open ran: once that process exits, reads fail
// with kNotFound even if the pid has been given to another process, so the
// files of one Resolve never mix two processes. Move-only; closes on
// destruction.
class ProcDir {
 public:
  static Result<ProcDir> Open(const std::filesystem::path& dir);
  ProcDir(ProcDir&& other) noexcept;
  ProcDir& operator=(ProcDir&& other) noexcept;
  ProcDir(const ProcDir&) = delete;
  ProcDir& operator=(const ProcDir&) = delete;
  ~ProcDir();

  // Reads the whole file `name` ("stat", "status", ...) of this directory.
  Result<std::string> Read(const char* name) const;

 private:
  explicit ProcDir(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Reads a whole file by path (proc/stat, proc/uptime, passwd, ...).
Result<std::string> ReadWholeFile(const std::filesystem::path& path);

}  // namespace gpuwatch::host
