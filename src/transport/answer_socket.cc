#include "transport/answer_socket.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/thread_name.h"

namespace gpuwatch {
namespace {

// Writes all of `text` to the blocking socket `fd`, whose send timeout
// bounds each wait; false when the client stopped reading or went away.
bool SendAll(int fd, const std::string& text) {
  std::size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<AnswerSocket>> AnswerSocket::Create(const std::string& path, Answer answer,
                                                           mode_t mode) {
  if (Status s = ClearStaleSocket(path, "the answer socket"); !s.ok()) return s;
  auto fd = ListenUnix(path);
  if (!fd) return fd.error();
  chmod(path.c_str(), mode);
  return std::unique_ptr<AnswerSocket>(new AnswerSocket(*fd, path, std::move(answer)));
}

AnswerSocket::AnswerSocket(int listen_fd, std::string path, Answer answer)
    : listen_fd_(listen_fd), path_(std::move(path)), answer_(std::move(answer)) {
  server_ = std::jthread([this](std::stop_token stop) { Serve(stop); });
}

AnswerSocket::~AnswerSocket() {
  server_.request_stop();
  wake_.Wake();
  if (server_.joinable()) server_.join();
  close(listen_fd_);
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

void AnswerSocket::Serve(std::stop_token stop) {
  NameThisThread("gw-answers");
  while (!stop.stop_requested()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_.fd(), POLLIN, 0}};
    // Without a wake pipe the stop request is seen within a second.
    if (poll(fds, 2, wake_.fd() >= 0 ? -1 : 1000) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    for (;;) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) break;  // EAGAIN: none left
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(kSendTimeout).count();
      const timeval limit{static_cast<time_t>(us / 1'000'000),
                          static_cast<suseconds_t>(us % 1'000'000)};
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
      const std::shared_ptr<const std::string> text = answer_();
      if (text) SendAll(fd, *text);
      close(fd);
    }
  }
}

Result<std::string> FetchAnswer(const std::string& path, std::chrono::milliseconds timeout,
                                std::size_t max_bytes) {
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + timeout;
  auto fd = ConnectUnix(path);
  if (!fd) return fd.error();
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{*fd};
  const std::optional<uid_t> server = PeerUid(*fd);
  if (!server || !TrustedServer(*server, getuid())) {
    return Status::Unavailable(fmt::format(
        "{}: served by {}, neither root, a system account nor this user: not believed", path,
        server ? fmt::format("uid {}", *server) : std::string("an unknown user")));
  }
  std::string text;
  char buf[64 * 1024];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0)
      return Status::Unavailable(fmt::format("{}: no answer within {} ms", path, timeout.count()));
    pollfd p{*fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    const ssize_t n = recv(*fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Unavailable(fmt::format("{}: {}", path, std::strerror(errno)));
    if (n == 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      return Status::Unavailable(
          fmt::format("{}: an answer over {} bytes: not read", path, max_bytes));
    }
  }
}

}  // namespace gpuwatch
