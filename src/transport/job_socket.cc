#include "transport/job_socket.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "core/mutex.h"
#include "core/printable.h"
#include "core/thread_name.h"
#include "transport/unix_socket.h"

namespace gpuwatch {

namespace {

// New connections taken per turn of the poll loop: fewer than any bound on
// connections, so a new one is read before newer ones can push it out.
constexpr int kAcceptsPerTurn = 32;

}  // namespace

double MarkLimiter::Refilled(const Bucket& b, std::chrono::steady_clock::time_point now) const {
  const double elapsed_s = std::chrono::duration<double>(now - b.at).count();
  return std::min(burst_, b.tokens + std::max(0.0, elapsed_s) * per_second_);
}

MarkLimiter::Verdict MarkLimiter::Take(std::uint32_t pid,
                                       std::chrono::steady_clock::time_point now) {
  auto it = buckets_.find(pid);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxSenders) {
      std::erase_if(buckets_, [&](const auto& kv) { return Refilled(kv.second, now) >= burst_; });
    }
    if (buckets_.size() >= kMaxSenders) {
      buckets_.erase(
          std::min_element(buckets_.begin(), buckets_.end(),
                           [](const auto& a, const auto& b) { return a.second.at < b.second.at; }));
    }
    it = buckets_.emplace(pid, Bucket{burst_, now, false}).first;
  }
  Bucket& b = it->second;
  b.tokens = Refilled(b, now);
  b.at = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return Verdict::kPass;
  }
  if (b.warned) return Verdict::kDrop;
  b.warned = true;
  return Verdict::kFirstDrop;
}

Result<std::unique_ptr<JobSocket>> JobSocket::CreateAt(const std::string& path,
                                                       JobSocketLimits limits) {
  if (Status s = ClearStaleSocket(path, "--socket"); !s.ok()) return s;
  auto fd = ListenUnix(path);
  if (!fd) return fd.error();
  // Any local user's job may report its own framework memory and marks; the
  // daemon attributes them by the sender's pid (SO_PEERCRED), not by what it says.
  chmod(path.c_str(), 0666);
  return std::unique_ptr<JobSocket>(new JobSocket(*fd, "", path, limits));
}

Result<std::unique_ptr<JobSocket>> JobSocket::Create(JobSocketLimits limits) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gpuwatch-run-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    return Status::Unavailable(fmt::format("cannot create a directory for the job socket in {}: {}",
                                           templ, std::strerror(errno)));
  }
  const std::string path = templ + "/socket";
  auto fd = ListenUnix(path);
  if (!fd) {
    std::filesystem::remove_all(templ);
    if (fd.error().code() == Status::Code::kInvalidArgument) {
      return Status::InvalidArgument(fd.error().message() + "; set TMPDIR to a shorter directory");
    }
    return fd.error();
  }
  return std::unique_ptr<JobSocket>(new JobSocket(*fd, templ, path, limits));
}

JobSocket::JobSocket(int listen_fd, std::string dir, std::string path, JobSocketLimits limits)
    : listen_fd_(listen_fd), dir_(std::move(dir)), path_(std::move(path)), limits_(limits) {
  if (limits_.marks_per_second > 0) limiter_.emplace(limits_.marks_per_second, limits_.mark_burst);
  server_ = std::jthread([this](std::stop_token stop) { Serve(stop); });
}

JobSocket::~JobSocket() {
  server_.request_stop();
  wake_.Wake();
  if (server_.joinable()) server_.join();
  close(listen_fd_);
  std::error_code ec;
  if (dir_.empty()) {
    std::filesystem::remove(path_, ec);
  } else {
    std::filesystem::remove_all(dir_, ec);
  }
}

std::vector<JobSocket::Received> JobSocket::Drain() {
  MutexLock lock(mu_);
  return std::exchange(messages_, {});
}

std::vector<std::string> JobSocket::DrainErrors() {
  MutexLock lock(mu_);
  closed_reported_ = false;
  return std::exchange(errors_, {});
}

std::uint64_t JobSocket::bad_lines() const {
  MutexLock lock(mu_);
  return bad_lines_;
}

std::uint64_t JobSocket::dropped_marks() const {
  MutexLock lock(mu_);
  return dropped_marks_;
}

std::uint64_t JobSocket::closed_idle() const {
  MutexLock lock(mu_);
  return closed_idle_;
}

void JobSocket::Serve(std::stop_token stop) {
  NameThisThread("gw-job-socket");
  using Clock = std::chrono::steady_clock;
  struct Client {
    std::string buffer;
    std::uint64_t line = 0;
    std::optional<std::uint32_t> pid;  // the sender, as the kernel says (SO_PEERCRED)
    Clock::time_point active;          // accepted, or last sent something
  };
  std::map<int, Client> clients;
  constexpr std::size_t kMaxWarnings = 64;  // beside the first 10 bad lines, per drain

  // Reads what `c` has sent, without waiting, and takes its lines in. False
  // when the client is gone or is cut off.
  auto take = [&](int fd, Client& c) {
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    const auto now = Clock::now();
    if (n > 0) {
      c.buffer.append(buf, static_cast<std::size_t>(n));
      c.active = now;
    }
    std::size_t nl;
    std::vector<Received> got;
    std::vector<std::string> bad;
    std::vector<std::string> warnings;
    std::uint64_t dropped = 0;
    while ((nl = c.buffer.find('\n')) != std::string::npos) {
      const std::string line = c.buffer.substr(0, nl);
      c.buffer.erase(0, nl + 1);
      ++c.line;
      if (line.empty()) continue;
      auto m = ParseJobMessage(line);
      if (!m) {
        // The message quotes the client's text: no ESC or newline of it
        // reaches the terminal or the log that prints this.
        bad.push_back(
            fmt::format("line {} from a client: {}", c.line, Printable(m.error().message())));
        continue;
      }
      if (m->kind == JobMessage::Kind::kMark && limiter_) {
        const auto verdict = limiter_->Take(c.pid.value_or(0), now);
        if (verdict != MarkLimiter::Verdict::kPass) {
          ++dropped;
          if (verdict == MarkLimiter::Verdict::kFirstDrop) {
            warnings.push_back(fmt::format(
                "{} sends more than {} marks a second (after a burst of {}): the rest are dropped",
                c.pid ? fmt::format("pid {}", *c.pid) : std::string("a client without a pid"),
                limits_.marks_per_second, limits_.mark_burst));
          }
          continue;
        }
      }
      got.push_back({std::chrono::system_clock::now(), std::move(*m), c.pid});
    }
    const bool too_long = c.buffer.size() > kMaxJobLine;
    if (too_long)
      bad.push_back(fmt::format("a client sent a line over {} bytes: disconnected", kMaxJobLine));
    {
      MutexLock lock(mu_);
      for (auto& r : got) messages_.push_back(std::move(r));
      bad_lines_ += bad.size();
      dropped_marks_ += dropped;
      for (auto& b : bad) {
        if (errors_.size() < 10) errors_.push_back(std::move(b));
      }
      for (auto& w : warnings) {
        if (errors_.size() < kMaxWarnings) errors_.push_back(std::move(w));
      }
      if (messages_.size() > 100'000)
        messages_.erase(messages_.begin(), messages_.begin() + 50'000);
    }
    return n > 0 && !too_long;
  };
  auto drop = [&](std::map<int, Client>::iterator it) {
    close(it->first);
    return clients.erase(it);
  };
  // Makes room for one more: the longest-idle connection of the sender that
  // holds the most goes, after what it sent is read.
  auto make_room = [&] {
    std::map<std::uint32_t, std::size_t> held;
    for (const auto& [fd, c] : clients) ++held[c.pid.value_or(0)];
    const std::uint32_t most =
        std::max_element(held.begin(), held.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;
        })->first;
    auto victim = clients.end();
    for (auto it = clients.begin(); it != clients.end(); ++it) {
      if (it->second.pid.value_or(0) != most) continue;
      if (victim == clients.end() || it->second.active < victim->second.active) victim = it;
    }
    (void)take(victim->first, victim->second);
    const std::optional<std::uint32_t> pid = victim->second.pid;
    drop(victim);
    MutexLock lock(mu_);
    ++closed_idle_;
    if (!closed_reported_ && errors_.size() < kMaxWarnings) {
      closed_reported_ = true;
      errors_.push_back(fmt::format(
          "{} connections open: closing the longest idle of {} for new ones ({} so far)",
          limits_.max_connections,
          pid ? fmt::format("pid {}", *pid) : std::string("clients without a pid"), closed_idle_));
    }
  };

  while (!stop.stop_requested()) {
    std::vector<pollfd> fds = {{listen_fd_, POLLIN, 0}, {wake_.fd(), POLLIN, 0}};
    for (const auto& [fd, c] : clients) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), 500) < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) break;
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = clients.find(fds[i].fd);
      if (!take(it->first, it->second)) drop(it);
    }
    if ((fds[0].revents & POLLIN) == 0) continue;
    for (int accepted = 0; accepted < kAcceptsPerTurn; ++accepted) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) break;  // EAGAIN: none left
      if (limits_.max_connections == 0) {
        close(fd);
        continue;
      }
      if (clients.size() >= limits_.max_connections) make_room();
      Client& c = clients[fd];
      c.active = Clock::now();
      ucred cred{};
      socklen_t len = sizeof cred;
      if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0) {
        c.pid = static_cast<std::uint32_t>(cred.pid);
      }
    }
  }
  for (const auto& [fd, c] : clients) close(fd);
}

}  // namespace gpuwatch
