// The lease book: the lease file of a runtime directory, opened and locked
// for every change, read through a cache; and whether a holder lives.
#include "host/leases.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "host/proc_files.h"
#include "host/proc_parse.h"

namespace gpuwatch::host {
namespace {

std::int64_t Nanos(const timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

LeaseFileStamp StampOf(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size, Nanos(st.st_mtim), Nanos(st.st_ctim)};
}

// The lease file of a directory we may have to create for every user.
Status EnsureDirectory(const std::filesystem::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      return Status::Unavailable(fmt::format("{}: {}", dir.string(), std::strerror(errno)));
    }
    std::error_code ec;
    std::filesystem::create_directories(dir.parent_path(), ec);  // a GPUWATCH_RUNTIME_DIR's
    if (::mkdir(dir.c_str(), 01777) != 0 && errno != EEXIST) {
      return Status::Unavailable(
          fmt::format("cannot create {}: {}", dir.string(), std::strerror(errno)));
    }
    ::chmod(dir.c_str(), 01777);  // past the umask; fails harmlessly if another user made it
    if (::lstat(dir.c_str(), &st) != 0) {
      return Status::Unavailable(fmt::format("{}: {}", dir.string(), std::strerror(errno)));
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(
        fmt::format("{} is not a directory (a symbolic link is refused)", dir.string()));
  }
  return Status::Ok();
}

// An open, locked lease file; unlocks and closes on destruction.
class LockedFile {
 public:
  ~LockedFile() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;

  // kNotFound when !create and the file is absent.
  static Result<std::unique_ptr<LockedFile>> Open(const std::filesystem::path& file, bool create) {
    const int flags = (create ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    const int fd = ::open(file.c_str(), flags, 0666);
    if (fd < 0) {
      const std::string why = fmt::format("{}: {}", file.string(), std::strerror(errno));
      return errno == ENOENT ? Status::NotFound(why) : Status::Unavailable(why);
    }
    auto out = std::unique_ptr<LockedFile>(new LockedFile(fd));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      return Status::InvalidArgument(fmt::format("{} is not a regular file", file.string()));
    }
    if (create && st.st_uid == ::geteuid() && (st.st_mode & 0777) != 0666) ::fchmod(fd, 0666);
    while (::flock(fd, create ? LOCK_EX : LOCK_SH) != 0) {
      if (errno != EINTR) {
        return Status::Unavailable(
            fmt::format("cannot lock {}: {}", file.string(), std::strerror(errno)));
      }
    }
    return out;
  }

  // The whole text; InvalidArgument naming the bound, and nothing more read,
  // past kMaxLeaseFileBytes.
  Result<std::string> ReadAll() const {
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && static_cast<std::uint64_t>(st.st_size) > kMaxLeaseFileBytes) {
      return Status::InvalidArgument(LeaseFileTooLarge(std::to_string(st.st_size)));
    }
    std::string text;
    char buf[8192];
    off_t at = 0;
    for (;;) {
      const std::size_t want = std::min(sizeof buf, kMaxLeaseFileBytes + 1 - text.size());
      const ssize_t n = ::pread(fd_, buf, want, at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::Unavailable(std::strerror(errno));
      if (n == 0) return text;
      text.append(buf, static_cast<std::size_t>(n));
      at += n;
      if (text.size() > kMaxLeaseFileBytes) {  // it grew while read
        return Status::InvalidArgument(
            LeaseFileTooLarge(fmt::format("over {}", kMaxLeaseFileBytes)));
      }
    }
  }

  LeaseFileStamp Stamp() const {
    struct stat st {};
    ::fstat(fd_, &st);
    return StampOf(st);
  }

  Status Replace(std::string_view text) const {
    if (::ftruncate(fd_, 0) != 0) return Status::Unavailable(std::strerror(errno));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n =
          ::pwrite(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::Unavailable(std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
    return Status::Ok();
  }

 private:
  explicit LockedFile(int fd) : fd_(fd) {}
  int fd_ = -1;
};
}  // namespace

bool ProcessLiveness::Alive(const ProcessKey& holder) const {
  auto stat = ReadWholeFile(proc_ / std::to_string(holder.pid) / "stat");
  if (!stat) {
    // hidepid=2 hides other users' processes: ask the kernel whether the pid
    // exists (EPERM: it does, and is not ours). Only our own /proc can.
    if (proc_ == "/proc" && holder.pid > 0) {
      return ::kill(static_cast<pid_t>(holder.pid), 0) == 0 || errno == EPERM;
    }
    return false;
  }
  const auto info = ParseStat(*stat);
  if (!info) return false;
  if (info->state == 'Z' || info->state == 'X') return false;
  return info->start_ticks == holder.start_ticks;
}

Result<ProcessKey> ProcessLiveness::Identify(std::uint32_t pid) const {
  auto stat = ReadWholeFile(proc_ / std::to_string(pid) / "stat");
  if (!stat) return Status::NotFound(fmt::format("no process {}: {}", pid, stat.error().message()));
  const auto info = ParseStat(*stat);
  if (!info) return Status::NotFound(fmt::format("process {}: unreadable stat", pid));
  return ProcessKey{pid, info->start_ticks};
}

std::filesystem::path LeaseDirectory(const char* runtime_dir_env) {
  if (runtime_dir_env != nullptr && *runtime_dir_env != '\0') return runtime_dir_env;
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec)) return "/dev/shm/gpuwatch";
  return "/tmp/gpuwatch";
}

Status EnsureRuntimeDirectory(const std::filesystem::path& dir) { return EnsureDirectory(dir); }

LeaseBook::LeaseBook(std::filesystem::path directory, ProcessLiveness liveness)
    : directory_(std::move(directory)),
      file_(directory_ / "leases.json"),
      liveness_(std::move(liveness)) {}

Status LeaseBook::Update(const std::function<void(LeaseTable&)>& change,
                         std::string* warning) const {
  if (Status s = EnsureDirectory(directory_); !s.ok()) return s;
  auto file = LockedFile::Open(file_, /*create=*/true);
  if (!file) return file.error();
  auto text = (*file)->ReadAll();
  if (!text && text.error().code() != Status::Code::kInvalidArgument)
    return Status::Unavailable(fmt::format("{}: {}", file_.string(), text.error().message()));
  // Over the bounds is corrupt too.
  auto table = text ? ParseLeaseTable(*text) : Result<LeaseTable>(text.error());
  if (!table) {
    if (warning != nullptr) {
      *warning = fmt::format("{}: {}; starting from an empty table", file_.string(),
                             table.error().message());
    }
    table = LeaseTable{};
  }
  table->Prune([this](const ProcessKey& h) { return liveness_.Alive(h); });
  change(*table);
  if (table->leases.size() > kMaxLeaseEntries || table->queue.size() > kMaxLeaseEntries) {
    return Status::Unavailable(
        fmt::format("{}: {} leases and {} waiters would be more than the {} of each a lease file "
                    "may hold; not written",
                    file_.string(), table->leases.size(), table->queue.size(), kMaxLeaseEntries));
  }
  const std::string updated = LeaseTableToJson(*table);
  if (updated.size() > kMaxLeaseFileBytes) {
    return Status::Unavailable(fmt::format("{}: {}; not written", file_.string(),
                                           LeaseFileTooLarge(std::to_string(updated.size()))));
  }
  if (text && updated == *text) return Status::Ok();  // no write, so no wake-up for the watchers
  return (*file)->Replace(updated);
}

Result<LeaseTable> LeaseBook::Load(std::optional<LeaseFileStamp>& stamp) const {
  stamp.reset();
  auto file = LockedFile::Open(file_, /*create=*/false);
  if (!file) {
    if (file.error().code() == Status::Code::kNotFound) return LeaseTable{};
    return file.error();
  }
  stamp = (*file)->Stamp();
  auto text = (*file)->ReadAll();
  if (!text) return text.error().WithContext(file_.string());
  auto table = ParseLeaseTable(*text);
  if (!table) return table.error().WithContext(file_.string());
  return table;
}

Result<LeaseTable> LeaseBook::Read() const {
  std::optional<LeaseFileStamp> stamp;
  auto table = Load(stamp);
  if (table) table->Prune([this](const ProcessKey& h) { return liveness_.Alive(h); });
  return table;
}

LeaseCache::LeaseCache(LeaseBook book, std::function<void(const std::string&)> warn,
                       std::chrono::nanoseconds settle)
    : book_(std::move(book)), warn_(std::move(warn)), settle_(settle) {}

Result<LeaseTable> LeaseCache::Read() {
  MutexLock lock(mu_);
  struct stat st {};
  const bool unchanged =
      ::lstat(book_.file_.c_str(), &st) == 0 && settled_ && stamp_ && *stamp_ == StampOf(st);
  if (!unchanged) {
    std::optional<LeaseFileStamp> stamp;
    table_ = book_.Load(stamp);
    ++loads_;
    const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    stamp_ = stamp;
    settled_ = stamp && now_ns - stamp->changed_ns >= settle_.count();
    if (!table_ && warn_ &&
        (table_.error().message() != warned_message_ || stamp != warned_stamp_)) {
      warned_message_ = table_.error().message();
      warned_stamp_ = stamp;
      warn_(warned_message_);
    }
  }
  if (!table_) return table_.error();
  LeaseTable table = *table_;
  lock.Unlock();
  table.Prune([this](const ProcessKey& h) { return book_.liveness_.Alive(h); });
  return table;
}

std::uint64_t LeaseCache::loads() const {
  MutexLock lock(mu_);
  return loads_;
}

}  // namespace gpuwatch::host
