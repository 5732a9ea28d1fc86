// JobSocket: the Unix stream socket `gpuwatch run` offers its child as
// GPUWATCH_SOCKET. A thread accepts any number of clients and parses their
// lines (job_protocol.h); the caller drains the messages with their arrival
// times. Bad lines are counted and the first few reported, never fatal.
// Create() makes it in a private directory (0700) removed on destruction;
// CreateAt() at a given path, for the daemon.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpuwatch/status.h"
#include "transport/job_protocol.h"

namespace gpuwatch {

class JobSocket {
 public:
  struct Received {
    std::chrono::system_clock::time_point time;
    JobMessage message;
    std::optional<std::uint32_t> sender_pid;  // SO_PEERCRED: the sender's pid in our namespace
  };
  // A socket in a new private directory (gpuwatch run's GPUWATCH_SOCKET).
  static Result<std::unique_ptr<JobSocket>> Create();
  // A socket at `path` for every local job (gpuwatch serve --socket), mode
  // 0666; a stale socket there is replaced, a live one or another file is an
  // error. Removed on destruction.
  static Result<std::unique_ptr<JobSocket>> CreateAt(const std::string& path);
  ~JobSocket();
  JobSocket(const JobSocket&) = delete;
  JobSocket& operator=(const JobSocket&) = delete;

  const std::string& path() const { return path_; }
  std::vector<Received> Drain();
  // "line 3 from a client: unknown message \"foo\" ..."; the first 10 only, the
  // client's control characters written out (core/printable.h).
  std::vector<std::string> DrainErrors();
  std::uint64_t bad_lines() const;

 private:
  JobSocket(int listen_fd, std::string dir, std::string path);
  void Serve(std::stop_token stop);

  int listen_fd_;
  int wake_[2] = {-1, -1};  // a pipe that wakes the poll loop on stop
  std::string dir_;
  std::string path_;
  mutable std::mutex mu_;
  std::vector<Received> messages_;   // GUARDED_BY(mu_)
  std::vector<std::string> errors_;  // GUARDED_BY(mu_)
  std::uint64_t bad_lines_ = 0;      // GUARDED_BY(mu_)
  std::jthread server_;
};

}  // namespace gpuwatch
