// Admission control and request deadlines for the HTTP server.
//
// cpp-httplib 0.11 queues every accepted connection without bound and times
// out single reads only, so a flood of connections, or a client that sends
// one byte a second, would hold every worker. Admission is the server's task
// queue: it sees each accepted socket (the listen thread's accept() is
// observed, see ObserveAccepts), runs at most `workers` connections with
// `queue` more waiting (a worker thread starts when a connection finds none
// idle, and one idle for `idle_exit` ends, so an idle server holds none), and
// gives the rest to a shedder thread that answers them without a worker: the
// probes (/healthz, /readyz) get their real answer, anything else 503 with
// Retry-After. The same thread, while connections are live, shuts down an admitted
// connection whose request has not arrived whole within `request_deadline` of
// the connection reaching a worker, or of its previous response, and one
// whose worker has read more than `max_request_bytes` of it before the
// request was whole (an endless header block: 431 first on plain HTTP). A connection that ends is
// closed gracefully: FIN first, then what the client still sends is read and
// dropped for a moment, so its last response is not lost to a reset.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/mutex.h"

namespace gpuwatch::server {

struct AdmissionStats {
  std::atomic<std::uint64_t> shed{0};           // answered by the shedder (503 or a probe)
  std::atomic<std::uint64_t> deadline_cuts{0};  // connections cut at the request deadline
  std::atomic<std::uint64_t> oversize_cuts{0};  // ... for sending more than max_request_bytes
};

struct ProbeAnswer {
  int status = 200;
  std::string body;
};

struct AdmissionOptions {
  int workers = 32;  // at most this many worker threads, started as connections need them
  int queue = 32;
  // A worker with no connection for this long ends.
  std::chrono::milliseconds idle_exit{10'000};
  std::chrono::milliseconds request_deadline{10'000};
  // Bytes read of a request before it is whole (request line and headers;
  // no route takes a body; what waits unread in the kernel does not count).
  // Checked every 100 ms, so a fast client may overshoot by
  // what is read in one.
  std::uint64_t max_request_bytes = 32 * 1024;
  // Plain HTTP: the shedder answers. TLS: it can only close.
  bool plain_http = true;
  // The answer to GET /healthz or /readyz (the path) when no worker is free.
  std::function<ProbeAnswer(std::string_view path)> probe;
  std::size_t max_shedding = 1024;  // beyond: closed at once
  std::shared_ptr<AdmissionStats> stats = std::make_shared<AdmissionStats>();
};

class Admission final : public httplib::TaskQueue {
 public:
  explicit Admission(AdmissionOptions options);
  ~Admission() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  // Called on the worker serving a connection: the request is read (no
  // deadline while it is handled, streams included), and the response is
  // sent (the next request's deadline starts).
  //
  // Keep-alive and pipelining: cpp-httplib 0.11 reads each request of a
  // connection through a buffer of its own and drops what it read beyond the
  // request, so requests pipelined into one write would be lost (and their
  // client would wait for answers that never come). `head_bytes` is the size
  // of the request head as sent (HttpServer reckons it from the parsed
  // request); when more than that was read from the socket for this request
  // (TCP_INFO, plain HTTP only), RequestArrived returns true: the response
  // must say "Connection: close", and ResponseSent then ends the connection
  // (FIN; nothing read after it is ever answered), so a pipelining client
  // retries the rest on a new one, as HTTP/1.1 lets it. Clients that wait
  // for each answer keep their connection.
  static bool RequestArrived(std::uint64_t head_bytes);
  // The connection ends once the response to this request is sent (a
  // refused request: what follows its head is not read as a request).
  static void CloseAfterResponse();
  static void ResponseSent();

  struct Connection;

 private:
  struct Job {
    std::function<void()> fn;
    int fd;
  };
  void Work();
  // Removes the workers that ended from workers_, to be joined outside mu_.
  std::vector<std::thread> TakeEnded() REQUIRES(mu_);
  // Done on the shedder's thread every 100 ms while connections are live:
  // cuts those past the deadline or over the size bound.
  void CheckLive() REQUIRES(mu_);
  void WakeShedder();
  void Shed();
  void AddShed(int fd);
  // Hands `fd` to the shedder through `incoming` (one of the two below);
  // false when it takes no more (stopping, or max_shedding reached).
  bool GiveToShedder(bool drain, int fd);  // to drain_incoming_, else shed_incoming_
  // Sends FIN on `fd` and gives it to the shedder to read and drop what
  // follows for a moment before closing it.
  void Drain(int fd);

  AdmissionOptions options_;
  Mutex mu_;
  CondVar cv_;
  std::deque<Job> queue_ GUARDED_BY(mu_);
  int running_ GUARDED_BY(mu_) = 0;  // workers serving a connection
  int idle_ GUARDED_BY(mu_) = 0;     // workers waiting for one
  std::vector<std::thread> workers_ GUARDED_BY(mu_);
  std::vector<std::thread::id> ended_ GUARDED_BY(mu_);  // workers that returned, to join
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<Connection*> live_ GUARDED_BY(mu_);
  std::vector<int> shed_incoming_ GUARDED_BY(mu_);
  std::vector<int> drain_incoming_ GUARDED_BY(mu_);
  int wake_fd_ = -1;  // eventfd waking the shedder
  std::thread shedder_;
};

// Whether accept() on the calling thread is observed for Admission (set on
// the listen thread before it starts accepting).
void ObserveAccepts(bool on);

}  // namespace gpuwatch::server
