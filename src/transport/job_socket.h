// JobSocket: the Unix stream socket `gpuwatch run` offers its child as
// GPUWATCH_SOCKET. A thread accepts clients, up to a bound, and parses their
// lines (job_protocol.h); the caller drains the messages with their arrival
// times. Bad lines are counted and the first few reported, never fatal.
// Create() makes it in a private directory (0700) removed on destruction;
// CreateAt() at a given path, for the daemon, where every local user may
// connect: there marks are also limited per sender (docs/serve.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/mutex.h"
#include "gpuwatch/status.h"
#include "transport/job_protocol.h"
#include "transport/unix_socket.h"

namespace gpuwatch {

// What a job socket takes in.
struct JobSocketLimits {
  // Open connections. One more closes the longest-idle connection of the
  // sender (SO_PEERCRED pid) that holds the most, after reading what it sent.
  std::size_t max_connections = 256;
  // Marks per sending pid: `mark_burst`, then `marks_per_second`; the rest are
  // dropped and counted, with one warning per sender. 0: no limit.
  double marks_per_second = 10;
  double mark_burst = 100;
};

// gpuwatch run's private socket, which only its job reaches: every mark counts.
inline JobSocketLimits PrivateJobSocketLimits() {
  JobSocketLimits l;
  l.marks_per_second = 0;
  return l;
}

// Token buckets of marks, one per sending pid: `burst` marks at once, then
// `per_second`. Keeps at most kMaxSenders buckets (a full bucket is as good
// as none, so those go first). Pure; not thread-safe.
class MarkLimiter {
 public:
  enum class Verdict { kPass, kDrop, kFirstDrop };  // kFirstDrop: this sender's first drop
  static constexpr std::size_t kMaxSenders = 4096;

  MarkLimiter(double per_second, double burst) : per_second_(per_second), burst_(burst) {}
  Verdict Take(std::uint32_t pid, std::chrono::steady_clock::time_point now);

 private:
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point at;  // when `tokens` was last refilled
    bool warned = false;
  };
  double Refilled(const Bucket& b, std::chrono::steady_clock::time_point now) const;

  double per_second_;
  double burst_;
  std::unordered_map<std::uint32_t, Bucket> buckets_;
};

class JobSocket {
 public:
  struct Received {
    std::chrono::system_clock::time_point time;
    JobMessage message;
    std::optional<std::uint32_t> sender_pid;  // SO_PEERCRED: the sender's pid in our namespace
  };
  // A socket in a new private directory (gpuwatch run's GPUWATCH_SOCKET).
  static Result<std::unique_ptr<JobSocket>> Create(
      JobSocketLimits limits = PrivateJobSocketLimits());
  // A socket at `path` for every local job (gpuwatch serve --socket), mode
  // 0666; a stale socket there is replaced, a live one or another file is an
  // error. Removed on destruction.
  static Result<std::unique_ptr<JobSocket>> CreateAt(const std::string& path,
                                                     JobSocketLimits limits = {});
  ~JobSocket();
  JobSocket(const JobSocket&) = delete;
  JobSocket& operator=(const JobSocket&) = delete;

  const std::string& path() const { return path_; }
  std::vector<Received> Drain();
  // "line 3 from a client: unknown message \"foo\" ..."; the first 10 only, the
  // client's control characters written out (core/printable.h); and the
  // warnings of the limits: once per sender whose marks are dropped, once
  // per drain when connections were closed for new ones.
  std::vector<std::string> DrainErrors();
  std::uint64_t bad_lines() const;
  std::uint64_t dropped_marks() const;  // over a sender's rate
  std::uint64_t closed_idle() const;    // connections closed for new ones

 private:
  JobSocket(int listen_fd, std::string dir, std::string path, JobSocketLimits limits);
  void Serve(std::stop_token stop);

  int listen_fd_;
  WakePipe wake_;  // wakes the poll loop on stop
  std::string dir_;
  std::string path_;
  const JobSocketLimits limits_;
  std::optional<MarkLimiter> limiter_;  // the server thread's; none: no mark limit
  mutable Mutex mu_;
  std::vector<Received> messages_ GUARDED_BY(mu_);
  std::vector<std::string> errors_ GUARDED_BY(mu_);
  std::uint64_t bad_lines_ GUARDED_BY(mu_) = 0;
  std::uint64_t dropped_marks_ GUARDED_BY(mu_) = 0;
  std::uint64_t closed_idle_ GUARDED_BY(mu_) = 0;
  bool closed_reported_ GUARDED_BY(mu_) = false;  // since the last DrainErrors
  std::jthread server_;
};

}  // namespace gpuwatch
