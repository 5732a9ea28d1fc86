// GPU leases: which GPUs the jobs of this machine have been given, and who
// waits for one. `select --lease` and `run --gpus auto:N` write them; status,
// `select`, the JSON API and /metrics read them. docs/select.md.
//
// The table is one JSON file in a runtime directory shared by every user of
// the machine (tmpfs: a reboot ends every lease). Every change is a
// read-modify-write under an exclusive flock on that file, so two launches
// never take the same GPU. A lease belongs to processes (pid + start time):
// it holds while any of them is alive and is dropped by the next reader once
// all are gone, even after kill -9, and never survives in a reused pid.
// Leases are cooperative: every local user can write the file, as every
// local user can use every GPU. So readers bound what they take from it
// (kMaxLeaseFileBytes, kMaxLeaseEntries): beyond, it is corrupt.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mutex.h"
#include "gpuwatch/process_key.h"
#include "gpuwatch/status.h"

namespace gpuwatch::host {

// A lease's holders are ProcessKeys (pid and start time): a pid reused by a
// new process is a different holder.

struct Lease {
  std::string uuid;                 // GPU-... or MIG-...: what is leased
  std::string device;               // "3", or "5:1" for MIG device 1 of GPU 5 (display)
  std::vector<ProcessKey> holders;  // the lease holds while any is alive
  std::string user;
  std::string command;
  std::uint64_t ticket = 0;  // of the request that took it; shared by its GPUs
  std::chrono::system_clock::time_point since;
};

struct Waiter {
  std::uint64_t ticket = 0;  // arrival order: lower tickets are served first
  ProcessKey holder;
  std::string user;
  std::string command;
  int count = 1;
  std::string wants;  // "1 GPU with ≥ 40.0 GiB free"
  std::chrono::system_clock::time_point since;
};

struct LeaseTable {
  std::uint64_t next_ticket = 1;
  std::vector<Lease> leases;
  std::vector<Waiter> queue;  // by ticket

  // Drops leases none of whose holders is alive and waiters that are not.
  // Returns how many entries went.
  int Prune(const std::function<bool(const ProcessKey&)>& alive);
  const Lease* Find(std::string_view uuid) const;
  // 1 for the first waiter, 0 when `ticket` does not wait.
  int Position(std::uint64_t ticket) const;
  // Removes the waiter and the leases of `ticket`; returns how many went.
  int Remove(std::uint64_t ticket);
};

// The most a lease file may hold. A larger file is refused unread and one with
// more leases, or more waiters, refused while parsing (no more than this is
// ever kept): both read as corrupt, the error naming the bound. 4096 leases
// fill about 1 MiB; no machine has that many GPUs.
inline constexpr std::size_t kMaxLeaseFileBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxLeaseEntries = 4096;  // leases, and waiters in the queue

// The file's text and back (lease_table.cc). Parse errors name the entry and
// the problem.
Result<LeaseTable> ParseLeaseTable(std::string_view text);
std::string LeaseTableToJson(const LeaseTable& table);
// "lease file: SIZE bytes, more than the ... a lease file may hold".
std::string LeaseFileTooLarge(std::string_view size);

// Whether processes live, through a /proc directory (the host's under
// --host-proc). Zombies count as dead: they hold no GPU.
class ProcessLiveness {
 public:
  explicit ProcessLiveness(std::filesystem::path proc = "/proc") : proc_(std::move(proc)) {}
  bool Alive(const ProcessKey& holder) const;
  // The holder `pid` is now; NotFound when no such process runs.
  Result<ProcessKey> Identify(std::uint32_t pid) const;

 private:
  std::filesystem::path proc_;
};

// The runtime directory: GPUWATCH_RUNTIME_DIR's value when given, else
// /dev/shm/gpuwatch (tmpfs, outside systemd's PrivateTmp), else
// /tmp/gpuwatch.
std::filesystem::path LeaseDirectory(const char* runtime_dir_env);
// Creates the runtime directory for every user (mode 1777, as /tmp) when it
// is missing; an error when it cannot be made or is not a directory.
Status EnsureRuntimeDirectory(const std::filesystem::path& dir);

// Which version of the lease file a text was read from: any write changes
// the change time (which no user can set) and usually the size or
// modification time, all in nanoseconds.
struct LeaseFileStamp {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size_bytes = 0;
  std::int64_t modified_ns = 0;
  std::int64_t changed_ns = 0;
  friend bool operator==(const LeaseFileStamp&, const LeaseFileStamp&) = default;
};

// The lease file of one directory. Safe to use from several processes and
// threads at once: each call opens, locks and closes the file.
class LeaseBook {
 public:
  LeaseBook(std::filesystem::path directory, ProcessLiveness liveness);

  // Runs `change` on the table (dead entries already pruned) under an
  // exclusive lock and writes the result back. Creates the directory (mode
  // 1777, as /tmp) and the file (0666) when missing. A file that does not
  // parse or is over the bounds is replaced by an empty table; the warning
  // names it. A change that would put the table over the bounds is refused.
  Status Update(const std::function<void(LeaseTable&)>& change,
                std::string* warning = nullptr) const;
  // The table under a shared lock, dead entries pruned in memory only. No
  // directory or file reads as an empty table.
  Result<LeaseTable> Read() const;

  const std::filesystem::path& file() const { return file_; }

 private:
  friend class LeaseCache;
  // The table as in the file, unpruned, and the version it was read from.
  Result<LeaseTable> Load(std::optional<LeaseFileStamp>& stamp) const;

  std::filesystem::path directory_;
  std::filesystem::path file_;
  ProcessLiveness liveness_;
};

// The lease table for many readers at once (the daemon's HTTP workers): the
// file is read and parsed once per change, a change being a new
// LeaseFileStamp; readers of an unchanged file get the table parsed before
// without reading it, its dead holders pruned at each read as by
// LeaseBook::Read (one /proc read per holder). A file changed less than
// `settle` ago is read again at each call: two writes within one tick of the
// file system's clock can leave the same stamp. Thread-safe; one reader
// loads the file at a time, the others wait for its table.
class LeaseCache {
 public:
  // `warn`, when given, hears why the file does not read, once per version.
  explicit LeaseCache(LeaseBook book, std::function<void(const std::string&)> warn = nullptr,
                      std::chrono::nanoseconds settle = std::chrono::seconds(2));

  Result<LeaseTable> Read();
  // How often the file was loaded (opened and parsed or refused).
  std::uint64_t loads() const;

 private:
  const LeaseBook book_;
  const std::function<void(const std::string&)> warn_;
  const std::chrono::nanoseconds settle_;
  mutable Mutex mu_;
  std::optional<LeaseFileStamp> stamp_ GUARDED_BY(mu_);         // of table_; none: not loaded
  bool settled_ GUARDED_BY(mu_) = false;                        // stamp_ is old enough to trust
  Result<LeaseTable> table_ GUARDED_BY(mu_) = LeaseTable{};     // unpruned
  std::string warned_message_ GUARDED_BY(mu_);                  // the last warning given
  std::optional<LeaseFileStamp> warned_stamp_ GUARDED_BY(mu_);  // ... about this version
  std::uint64_t loads_ GUARDED_BY(mu_) = 0;
};

}  // namespace gpuwatch::host
