#include "transport/job_socket.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "core/printable.h"

namespace gpuwatch {

namespace {

// Listens on `path`: a Unix stream socket, or an error naming the path.
Result<int> Listen(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return Status::InvalidArgument(fmt::format("socket path {} is too long (at most {} bytes)",
                                               path, sizeof addr.sun_path - 1));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(fd, 16) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    return Status::Unavailable(fmt::format("cannot listen on {}: {}", path, why));
  }
  return fd;
}

// True when something accepts connections on the socket at `path`.
bool Answers(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), std::min(path.size() + 1, sizeof addr.sun_path - 1));
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

}  // namespace

Result<std::unique_ptr<JobSocket>> JobSocket::CreateAt(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (!ec && std::filesystem::exists(status)) {
    if (status.type() != std::filesystem::file_type::socket) {
      return Status::InvalidArgument(
          fmt::format("--socket {}: a file that is not a socket is in the way", path));
    }
    if (Answers(path)) {
      return Status::Unavailable(fmt::format("--socket {}: another process serves it", path));
    }
    std::filesystem::remove(path, ec);  // left behind by a daemon that died
  }
  auto fd = Listen(path);
  if (!fd) return fd.error();
  // Any local user's job may report its own framework memory and marks; the
  // daemon attributes them by the sender's pid (SO_PEERCRED), not by what it says.
  chmod(path.c_str(), 0666);
  return std::unique_ptr<JobSocket>(new JobSocket(*fd, "", path));
}

Result<std::unique_ptr<JobSocket>> JobSocket::Create() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gpuwatch-run-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    return Status::Unavailable(fmt::format("cannot create a directory for the job socket in {}: {}",
                                           templ, std::strerror(errno)));
  }
  const std::string path = templ + "/socket";
  auto fd = Listen(path);
  if (!fd) {
    std::filesystem::remove_all(templ);
    if (fd.error().code() == Status::Code::kInvalidArgument) {
      return Status::InvalidArgument(fd.error().message() + "; set TMPDIR to a shorter directory");
    }
    return fd.error();
  }
  return std::unique_ptr<JobSocket>(new JobSocket(*fd, templ, path));
}

JobSocket::JobSocket(int listen_fd, std::string dir, std::string path)
    : listen_fd_(listen_fd), dir_(std::move(dir)), path_(std::move(path)) {
  if (pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  server_ = std::jthread([this](std::stop_token stop) { Serve(stop); });
}

JobSocket::~JobSocket() {
  server_.request_stop();
  if (wake_[1] >= 0) {
    const char b = 1;
    [[maybe_unused]] auto n = write(wake_[1], &b, 1);
  }
  if (server_.joinable()) server_.join();
  close(listen_fd_);
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
  std::error_code ec;
  if (dir_.empty()) {
    std::filesystem::remove(path_, ec);
  } else {
    std::filesystem::remove_all(dir_, ec);
  }
}

std::vector<JobSocket::Received> JobSocket::Drain() {
  std::lock_guard lock(mu_);
  return std::exchange(messages_, {});
}

std::vector<std::string> JobSocket::DrainErrors() {
  std::lock_guard lock(mu_);
  return std::exchange(errors_, {});
}

std::uint64_t JobSocket::bad_lines() const {
  std::lock_guard lock(mu_);
  return bad_lines_;
}

void JobSocket::Serve(std::stop_token stop) {
  struct Client {
    std::string buffer;
    std::uint64_t line = 0;
    std::optional<std::uint32_t> pid;  // the sender, as the kernel says (SO_PEERCRED)
  };
  std::map<int, Client> clients;
  constexpr std::size_t kMaxClients = 256;
  while (!stop.stop_requested()) {
    std::vector<pollfd> fds = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    for (const auto& [fd, c] : clients) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), 500) < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) break;
    if ((fds[0].revents & POLLIN) != 0) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0 && clients.size() < kMaxClients) {
        Client& c = clients[fd];
        ucred cred{};
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0) {
          c.pid = static_cast<std::uint32_t>(cred.pid);
        }
      } else if (fd >= 0) {
        close(fd);
      }
    }
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const int fd = fds[i].fd;
      Client& c = clients[fd];
      char buf[4096];
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) c.buffer.append(buf, static_cast<std::size_t>(n));
      std::size_t nl;
      std::vector<Received> got;
      std::vector<std::string> bad;
      while ((nl = c.buffer.find('\n')) != std::string::npos) {
        const std::string line = c.buffer.substr(0, nl);
        c.buffer.erase(0, nl + 1);
        ++c.line;
        if (line.empty()) continue;
        auto m = ParseJobMessage(line);
        if (m) {
          got.push_back({std::chrono::system_clock::now(), std::move(*m), c.pid});
        } else {
          // The message quotes the client's text: no ESC or newline of it
          // reaches the terminal or the log that prints this.
          bad.push_back(
              fmt::format("line {} from a client: {}", c.line, Printable(m.error().message())));
        }
      }
      const bool too_long = c.buffer.size() > kMaxJobLine;
      if (too_long)
        bad.push_back(fmt::format("a client sent a line over {} bytes: disconnected", kMaxJobLine));
      {
        std::lock_guard lock(mu_);
        for (auto& r : got) messages_.push_back(std::move(r));
        bad_lines_ += bad.size();
        for (auto& b : bad) {
          if (errors_.size() < 10) errors_.push_back(std::move(b));
        }
        if (messages_.size() > 100'000)
          messages_.erase(messages_.begin(), messages_.begin() + 50'000);
      }
      if (n <= 0 || too_long) {
        close(fd);
        clients.erase(fd);
      }
    }
  }
  for (const auto& [fd, c] : clients) close(fd);
}

}  // namespace gpuwatch
