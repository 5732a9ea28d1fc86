// Admission control and request deadlines on a real socket: a flood of 500
// connections is served or refused with 503 while /healthz keeps answering
// and memory stays bounded; a client that trickles its request is cut at the
// deadline; a stream outlives the deadline.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../backends/fake_env.h"
#include "sampler/collect.h"
#include "server/http_server.h"

namespace gpuwatch::server {
namespace {

std::shared_ptr<Hub> ReadyHub() {
  auto hub = std::make_shared<Hub>();
  auto backend = testing::OpenFake("fixed.yaml", 100);
  auto s = std::make_shared<Snapshot>(CollectOnce(*backend, nullptr, CollectOptions{}));
  s->sequence = 1;
  hub->Publish(s, {}, {}, {});
  return hub;
}

std::unique_ptr<HttpServer> StartServer(
    std::shared_ptr<Hub> hub, std::chrono::milliseconds deadline,
    std::chrono::milliseconds idle_worker_exit = std::chrono::seconds(10)) {
  HttpOptions o;
  o.idle_worker_exit = idle_worker_exit;
  o.port = 0;
  o.version = "test";
  o.keepalive = std::chrono::seconds(1);
  o.request_deadline = deadline;
  auto s = HttpServer::Start(o, std::move(hub));
  EXPECT_TRUE(s) << s.error().message();
  return s ? std::move(*s) : nullptr;
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Threads of this process.
int Threads() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// Waits up to 20 s for the thread count to become `want`; returns the last count.
int WaitForThreads(int want) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int n = Threads();
  while (n != want && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    n = Threads();
  }
  return n;
}

double RssMiB() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// Reads every connection to its end (or `limit`) and returns what each got.
std::vector<std::string> ReadAll(const std::vector<int>& fds, std::chrono::seconds limit) {
  std::vector<std::string> got(fds.size());
  std::vector<bool> open(fds.size(), true);
  const auto end = std::chrono::steady_clock::now() + limit;
  std::size_t remaining = fds.size();
  while (remaining > 0 && std::chrono::steady_clock::now() < end) {
    std::vector<pollfd> p;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!open[i]) continue;
      p.push_back(pollfd{fds[i], POLLIN, 0});
      which.push_back(i);
    }
    if (poll(p.data(), p.size(), 200) <= 0) continue;
    for (std::size_t k = 0; k < p.size(); ++k) {
      if (p[k].revents == 0) continue;
      char buf[4096];
      const ssize_t n = recv(p[k].fd, buf, sizeof buf, 0);
      if (n > 0) {
        got[which[k]].append(buf, static_cast<std::size_t>(n));
      } else {
        open[which[k]] = false;
        --remaining;
      }
    }
  }
  return got;
}

// The exporter's own counter `name` on /metrics. Right after a flood the
// workers may still be draining the closed connections, and a scrape then is
// shed (503) like any other: it is asked again until a worker answers (10 s).
double Counter(int port, const std::string& name) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/metrics");
  while ((!r || r->status == 503) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    r = c.Get("/metrics");
  }
  if (!r || r->status != 200) return -1;
  const std::string key = name + "{hostname=\"\"} ";
  const auto at = r->body.find(key);
  return at == std::string::npos ? -1 : std::stod(r->body.substr(at + key.size()));
}

TEST(Admission, FiveHundredConnectionsAreServedOrRefusedWhileHealthzAnswers) {
  auto server = StartServer(ReadyHub(), std::chrono::seconds(10));
  ASSERT_TRUE(server);
  const int port = server->port();
  const double rss_before = RssMiB();

  // 64 silent clients take the 32 workers and the 32 places in the queue.
  std::vector<int> holders;
  for (int i = 0; i < 64; ++i) holders.push_back(Connect(port));

  std::atomic<bool> flooding{true};
  std::atomic<int> probes{0}, probes_ok{0};
  std::thread prober([&] {
    while (flooding) {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(10, 0);
      auto r = c.Get("/healthz");
      ++probes;
      if (r && r->status == 200 && r->body == "ok\n") ++probes_ok;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });

  const std::string request =
      "GET /api/v1/devices HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  std::vector<int> fds;
  for (int i = 0; i < 500; ++i) {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0) << "connection " << i;
    ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    fds.push_back(fd);
  }
  const std::vector<std::string> got = ReadAll(fds, std::chrono::seconds(60));
  flooding = false;
  prober.join();
  for (int fd : fds) close(fd);
  for (int fd : holders) close(fd);

  int ok = 0, busy = 0;
  for (const std::string& g : got) {
    if (g.rfind("HTTP/1.1 200", 0) == 0) ++ok;
    if (g.rfind("HTTP/1.1 503", 0) == 0) {
      ++busy;
      EXPECT_NE(g.find("Retry-After: 1"), std::string::npos) << g;
    }
  }
  EXPECT_EQ(ok + busy, 500) << "every connection got an answer, none a reset or silence";
  EXPECT_GE(busy, 1) << "connections beyond the 64 places are refused";
  EXPECT_GT(probes.load(), 0);
  EXPECT_EQ(probes_ok.load(), probes.load()) << "/healthz answered throughout";
  EXPECT_LT(RssMiB() - rss_before, 64.0) << "memory stays bounded";
  EXPECT_GE(Counter(port, "gpuwatch_exporter_http_shed_total"), busy) << "every 503 counted";
}

TEST(Admission, AClientTricklingItsRequestIsCutAtTheDeadline) {
  auto server = StartServer(ReadyHub(), std::chrono::milliseconds(1000));
  ASSERT_TRUE(server);
  const int fd = Connect(server->port());
  ASSERT_GE(fd, 0);
  // One byte every 200 ms: each read is well inside the 5 s read timeout, the
  // whole request would take 8 s.
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: trickle\r\n\r\n";
  std::size_t sent = 0;
  bool cut = false;
  std::string answer;
  for (; sent < request.size() && !cut; ++sent) {
    if (send(fd, &request[sent], 1, MSG_NOSIGNAL) != 1) {
      cut = true;
      break;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 200) > 0) {
      char buf[256];
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n > 0) answer.append(buf, static_cast<std::size_t>(n));
      if (n <= 0) cut = true;
    }
  }
  close(fd);
  EXPECT_TRUE(cut) << "the server closed the connection";
  EXPECT_LT(sent, request.size()) << "before the request was whole";
  EXPECT_EQ(answer.find("200"), std::string::npos) << answer;

  EXPECT_EQ(Counter(server->port(), "gpuwatch_exporter_http_deadline_cuts_total"), 1);
}

TEST(Admission, AStreamOutlivesTheRequestDeadline) {
  auto hub = ReadyHub();
  auto server = StartServer(hub, std::chrono::milliseconds(500));
  ASSERT_TRUE(server);
  std::atomic<bool> late_data{false};
  const auto start = std::chrono::steady_clock::now();
  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(10, 0);
  auto r = c.Get("/api/v1/stream", [&](const char*, std::size_t) {
    const bool late = std::chrono::steady_clock::now() - start > std::chrono::milliseconds(2500);
    if (late) late_data = true;
    return !late;  // stop once data came after five deadlines
  });
  EXPECT_TRUE(late_data) << "the stream was still open after 2.5 s (keepalive every 1 s)";
}

TEST(Admission, WorkersStartAsConnectionsNeedThemAndEndWhenIdle) {
  auto hub = ReadyHub();
  const int before = Threads();
  auto server = StartServer(hub, std::chrono::seconds(10), std::chrono::milliseconds(300));
  ASSERT_TRUE(server);
  httplib::Client c("127.0.0.1", server->port());
  auto r = c.Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(WaitForThreads(before + 2), before + 2)
      << "idle, the server holds the listener and the shedder, and no worker";

  // Ten silent clients each hold a worker (their request never comes).
  std::vector<int> holders;
  for (int i = 0; i < 10; ++i) holders.push_back(Connect(server->port()));
  EXPECT_EQ(WaitForThreads(before + 12), before + 12) << "one worker per connection";
  for (int fd : holders) close(fd);
  EXPECT_EQ(WaitForThreads(before + 2), before + 2) << "idle again";

  r = c.Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << "a connection after the workers ended starts one";
}

}  // namespace
}  // namespace gpuwatch::server
