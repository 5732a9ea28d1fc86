// Admission's shedder thread (admission.h): it answers the connections no
// worker could take (the probes for real, anything else 503, from the request
// line alone), drains what clients send after an answer that closes, and
// every 100 ms cuts the live requests past their deadline or size
// (Admission::CheckLive).
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

#include "core/mutex.h"
#include "server/admission.h"
#include "server/plain_response.h"

namespace gpuwatch::server {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kShedRequestWait = std::chrono::milliseconds(1000);  // for the request line
constexpr auto kShedDrain = std::chrono::milliseconds(500);  // reading what follows our answer
constexpr std::size_t kShedBuffer = 4096;

// How often the shedder looks at the live connections' deadlines and sizes.
constexpr auto kLiveCheckPeriod = std::chrono::milliseconds(100);

// A shed connection: waiting for its request line, then draining after our answer.
struct Shedding {
  int fd;
  Clock::time_point deadline;
  std::string request;
  bool draining = false;
};

}  // namespace

void Admission::WakeShedder() {
  const std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

bool Admission::GiveToShedder(bool drain, int fd) {
  MutexLock lock(mu_);
  std::vector<int>& incoming = drain ? drain_incoming_ : shed_incoming_;
  if (stopping_ || shed_incoming_.size() + drain_incoming_.size() >= options_.max_shedding) {
    return false;
  }
  incoming.push_back(fd);
  WakeShedder();
  return true;
}

void Admission::Drain(int fd) {
  ::shutdown(fd, SHUT_WR);
  if (!GiveToShedder(/*drain=*/true, fd)) close(fd);
}

void Admission::AddShed(int fd) {
  options_.stats->shed++;
  // TLS (no plain answer is possible), too many shed already, or stopping: closed.
  if (!options_.plain_http || !GiveToShedder(/*drain=*/false, fd)) close(fd);
}

namespace {

// Answers a shed connection from its request line: the probes for real,
// anything else 503.
void Answer(Shedding& s, const AdmissionOptions& options) {
  std::string_view line(s.request);
  line = line.substr(0, line.find("\r\n"));
  const auto sp = line.find(' ');
  const std::string_view method = line.substr(0, sp);
  std::string_view path = sp == std::string_view::npos ? "" : line.substr(sp + 1);
  path = path.substr(0, std::min(path.find(' '), path.find('?')));
  ProbeAnswer answer{503, "server busy: too many connections; try again shortly\n"};
  if ((method == "GET" || method == "HEAD") && (path == "/healthz" || path == "/readyz") &&
      options.probe) {
    answer = options.probe(path);
  }
  const std::string response = PlainResponse(answer.status, answer.body, method == "HEAD");
  (void)!send(s.fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(s.fd, SHUT_WR);
  s.draining = true;
  s.deadline = Clock::now() + kShedDrain;
}

}  // namespace

void Admission::Shed() {
  std::vector<Shedding> conns;
  std::vector<pollfd> fds;
  auto next_check = Clock::now();
  for (;;) {
    bool any_live = false;
    {
      MutexLock lock(mu_);
      if (stopping_) break;
      any_live = !live_.empty();
      if (any_live && Clock::now() >= next_check) {
        CheckLive();
        next_check = Clock::now() + kLiveCheckPeriod;
      }
      for (int fd : shed_incoming_) {
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        conns.push_back(Shedding{fd, Clock::now() + kShedRequestWait, {}, false});
      }
      shed_incoming_.clear();
      for (int fd : drain_incoming_) {
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        conns.push_back(Shedding{fd, Clock::now() + kShedDrain, {}, true});
      }
      drain_incoming_.clear();
    }
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    auto next = any_live ? next_check : Clock::now() + std::chrono::seconds(1);
    for (const Shedding& s : conns) {
      fds.push_back(pollfd{s.fd, POLLIN, 0});
      next = std::min(next, s.deadline);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
    poll(fds.data(), fds.size(), static_cast<int>(std::max<std::int64_t>(0, wait.count()) + 1));
    if (fds[0].revents != 0) {
      std::uint64_t n = 0;
      (void)!read(wake_fd_, &n, sizeof n);
    }
    const auto now = Clock::now();
    for (std::size_t i = 0; i < conns.size(); ++i) {
      Shedding& s = conns[i];
      bool closed = false;
      if (fds[i + 1].revents != 0) {
        char buf[1024];
        const ssize_t n = recv(s.fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          closed = true;
        } else if (n > 0 && !s.draining) {
          s.request.append(buf, static_cast<std::size_t>(std::min<ssize_t>(
                                    n, static_cast<ssize_t>(kShedBuffer - s.request.size()))));
          if (s.request.find("\r\n") != std::string::npos || s.request.size() >= kShedBuffer)
            Answer(s, options_);
        }
      }
      if (!closed && now >= s.deadline) {
        if (s.draining) {
          closed = true;
        } else {
          Answer(s, options_);
        }
      }
      if (closed) {
        close(s.fd);
        s.fd = -1;
      }
    }
    std::erase_if(conns, [](const Shedding& s) { return s.fd < 0; });
  }
  for (const Shedding& s : conns) close(s.fd);
  MutexLock lock(mu_);
  for (int fd : shed_incoming_) close(fd);
  for (int fd : drain_incoming_) close(fd);
  shed_incoming_.clear();
  drain_incoming_.clear();
}

}  // namespace gpuwatch::server
