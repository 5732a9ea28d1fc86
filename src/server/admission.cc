#include "server/admission.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

#include "core/mutex.h"
#include "core/thread_name.h"
#include "server/plain_response.h"
#include "server/tcp_bytes.h"

namespace gpuwatch::server {
namespace {

using Clock = std::chrono::steady_clock;

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
