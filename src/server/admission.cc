#include "server/admission.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

#include "core/mutex.h"
#include "core/thread_name.h"
#include "server/tcp_bytes.h"

namespace gpuwatch::server {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kShedRequestWait = std::chrono::milliseconds(1000);  // for the request line
constexpr auto kShedDrain = std::chrono::milliseconds(500);  // reading what follows our answer
constexpr std::size_t kShedBuffer = 4096;

// How often the shedder looks at the live connections' deadlines and sizes.
constexpr auto kLiveCheckPeriod = std::chrono::milliseconds(100);

thread_local bool t_observe_accepts = false;
thread_local int t_accepted = -1;
thread_local Admission::Connection* t_connection = nullptr;

int TakeAccepted() {
  const int fd = t_accepted;
  t_accepted = -1;
  return fd;
}

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string_view Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

std::string PlainResponse(int status, std::string_view body, bool head) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{}Connection: "
      "close\r\n\r\n{}",
      status, Reason(status), body.size(), status == 503 ? "Retry-After: 1\r\n" : "",
      head ? "" : body);
}

// A shed connection: waiting for its request line, then draining after our answer.
struct Shedding {
  int fd;
  Clock::time_point deadline;
  std::string request;
  bool draining = false;
};

}  // namespace

struct Admission::Connection {
  int fd = -1;  // a dup of the worker's socket: never reused while we hold it
  std::atomic<std::uint64_t> request_from{0};  // bytes read when the request began (TCP_INFO)
  std::atomic<bool> handling{false};
  std::atomic<std::int64_t> since_ns{0};
  // Set and read under Admission::mu_ (atomic: the analysis cannot name
  // another object's mutex).
  std::atomic<bool> cut{false};
  std::atomic<bool> disconnected{false};
  bool plain_http = true;  // TCP_INFO's byte count is the request's (not TLS records)
  // Read beyond a request (pipelined): answered with Connection: close, then ended.
  std::atomic<bool> close_after{false};
};

void ObserveAccepts(bool on) { t_observe_accepts = on; }

Admission::Admission(AdmissionOptions options) : options_(std::move(options)) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  shedder_ = std::thread([this] {
    NameThisThread("gw-shedder");
    Shed();
  });
}

Admission::~Admission() {
  shutdown();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void Admission::enqueue(std::function<void()> fn) {
  const int fd = TakeAccepted();
  std::vector<std::thread> ended;
  bool admitted = false;
  {
    MutexLock lock(mu_);
    const auto taken = static_cast<std::size_t>(running_) + queue_.size();
    if (fd < 0 ||
        (!stopping_ && taken < static_cast<std::size_t>(options_.workers + options_.queue))) {
      queue_.push_back(Job{std::move(fn), fd});
      ended = TakeEnded();
      if (!stopping_ && static_cast<std::size_t>(idle_) < queue_.size() &&
          workers_.size() < static_cast<std::size_t>(options_.workers)) {
        workers_.emplace_back([this] {
          NameThisThread("gw-http-worker");
          Work();
        });
      }
      cv_.NotifyOne();
      admitted = true;
    }
  }
  for (auto& t : ended) t.join();
  // Not admitted: the job is dropped, and its socket is the shedder's to answer and close.
  if (!admitted) AddShed(fd);
}

std::vector<std::thread> Admission::TakeEnded() {
  std::vector<std::thread> ended;
  for (const auto id : ended_) {
    auto it = std::find_if(workers_.begin(), workers_.end(),
                           [id](const std::thread& t) { return t.get_id() == id; });
    if (it == workers_.end()) continue;
    ended.push_back(std::move(*it));
    workers_.erase(it);
  }
  ended_.clear();
  return ended;
}

void Admission::shutdown() {
  std::vector<std::thread> workers;
  {
    MutexLock lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    workers.swap(workers_);
    ended_.clear();
  }
  cv_.NotifyAll();
  if (wake_fd_ >= 0) WakeShedder();
  for (auto& t : workers) t.join();
  if (shedder_.joinable()) shedder_.join();
}

bool Admission::RequestArrived(std::uint64_t head_bytes) {
  Connection* c = t_connection;
  if (c == nullptr) return false;
  c->handling = true;
  if (!c->plain_http || c->fd < 0) return false;
  const std::uint64_t read = TcpBytesRead(c->fd), from = c->request_from;
  // More read than this request: the next one(s) sit in cpp-httplib's
  // buffer, which is dropped once this request is answered.
  if (read > from && read - from > head_bytes) c->close_after = true;
  return c->close_after;
}

void Admission::CloseAfterResponse() {
  if (t_connection != nullptr) t_connection->close_after = true;
}

void Admission::ResponseSent() {
  if (t_connection == nullptr) return;
  if (t_connection->close_after && t_connection->fd >= 0) {
    // The answer is written: FIN after it, so the client sees the end at
    // once. Reading goes on (a client still sending a refused body must get
    // the answer, not a reset that would discard it): whatever cpp-httplib
    // reads next can never be answered, and it ends at the failed write or
    // the client's close.
    ::shutdown(t_connection->fd, SHUT_WR);
  }
  t_connection->request_from = TcpBytesRead(t_connection->fd);
  t_connection->since_ns = NowNs();
  t_connection->handling = false;
}

void Admission::Work() {
  for (;;) {
    Job job;
    {
      MutexLock lock(mu_);
      ++idle_;
      const bool woken = cv_.WaitFor(lock, options_.idle_exit,
                                     [&]() REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
      --idle_;
      if (queue_.empty()) {
        if (stopping_) return;  // every admitted connection served
        // Idle too long: this worker ends (a connection that comes later starts another).
        if (!woken) {
          ended_.push_back(std::this_thread::get_id());
          return;
        }
        continue;
      }
      job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    if (job.fd >= 0) {
      // cpp-httplib writes headers and body separately; with Nagle on, the
      // body waits for the client's delayed ACK: 40 ms a response.
      const int one = 1;
      setsockopt(job.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    Connection conn;
    conn.fd = job.fd >= 0 ? fcntl(job.fd, F_DUPFD_CLOEXEC, 0) : -1;
    conn.since_ns = NowNs();
    conn.plain_http = options_.plain_http;
    bool first_live = false;
    {
      MutexLock lock(mu_);
      first_live = live_.empty();
      live_.push_back(&conn);
    }
    if (first_live) WakeShedder();  // it checks live connections only while there are some
    t_connection = &conn;
    job.fn();  // cpp-httplib serves the connection and closes its socket
    t_connection = nullptr;
    bool cut = false;
    {
      MutexLock lock(mu_);
      live_.erase(std::find(live_.begin(), live_.end(), &conn));
      --running_;
      cut = conn.cut;
    }
    if (conn.fd < 0) continue;
    if (cut) {
      // A cut client may still be sending: a reset stops it (a FIN would
      // leave it writing into a closed window until the kernel gives up).
      // What we answered it is already on its way, ahead of the reset.
      const linger abort{1, 0};
      setsockopt(conn.fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
      close(conn.fd);
    } else {
      Drain(conn.fd);
    }
  }
}

void Admission::CheckLive() {
  const auto deadline_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(options_.request_deadline).count();
  const std::int64_t now = NowNs();
  for (Connection* c : live_) {
    if (c->cut && !c->disconnected) {
      // Still being read a tick after the cut: a client that keeps sending
      // keeps the worker's reads fed despite SHUT_RD. Dissolving the
      // connection (connect to AF_UNSPEC: a reset) purges the queue and
      // ends them.
      sockaddr unspec{};
      unspec.sa_family = AF_UNSPEC;
      (void)!connect(c->fd, &unspec, sizeof unspec);
      c->disconnected = true;
      continue;
    }
    if (c->cut || c->fd < 0 || c->handling) continue;
    const bool late = now - c->since_ns > deadline_ns;
    const std::uint64_t read = TcpBytesRead(c->fd), from = c->request_from;
    const bool oversize = read > from && read - from > options_.max_request_bytes;
    if (!late && !oversize) continue;
    if (oversize && options_.plain_http) {
      // Nothing of this request has been answered: the worker is still reading it.
      const std::string answer = PlainResponse(
          431, fmt::format("request header block over {} bytes\n", options_.max_request_bytes),
          false);
      (void)!send(c->fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    // Wakes the worker's blocked read with end-of-file; cpp-httplib then closes.
    ::shutdown(c->fd, SHUT_RDWR);
    c->cut = true;
    (oversize ? options_.stats->oversize_cuts : options_.stats->deadline_cuts)++;
  }
}

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

// cpp-httplib's listen loop calls accept() and then enqueue() on the same
// thread; seeing the accepted socket here is what lets Admission answer or
// cut a connection it did not admit. Only threads that ObserveAccepts() record.
extern "C" int accept(int fd, sockaddr* __restrict addr, socklen_t* __restrict len) {
  using gpuwatch::server::t_observe_accepts;
  const int s = accept4(fd, addr, len, 0);
  if (t_observe_accepts) gpuwatch::server::t_accepted = s;
  return s;
}
