// TcpBytesRead on a real loopback connection: it counts what the reader has
// taken from the socket, not what still waits in the kernel's queue, and it
// stays exact while more bytes keep arriving (the race that once made a
// keep-alive client's next request look pipelined).
#include "server/tcp_bytes.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace gpuwatch::server {
namespace {

// The two ends of a loopback TCP connection.
struct Pair {
  int client = -1;
  int server = -1;
  Pair() {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listener, 1) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "no loopback listener";
      return;
    }
    client = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ADD_FAILURE() << "no loopback connection";
    }
    server = accept(listener, nullptr, nullptr);
    close(listener);
  }
  ~Pair() {
    if (client >= 0) close(client);
    if (server >= 0) close(server);
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
};

// Waits (up to 10 s) until `n` bytes wait in `fd`'s queue.
bool WaitQueued(int fd, int n) {
  for (int i = 0; i < 10000; ++i) {
    int queued = 0;
    if (ioctl(fd, FIONREAD, &queued) == 0 && queued >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

TEST(TcpBytesRead, CountsWhatWasReadNotWhatWaits) {
  Pair p;
  ASSERT_GE(p.server, 0);
  const std::string data(1000, 'x');
  ASSERT_EQ(send(p.client, data.data(), data.size(), 0), 1000);
  ASSERT_TRUE(WaitQueued(p.server, 1000));
  EXPECT_EQ(TcpBytesRead(p.server), 0u) << "nothing read yet";
  char buf[1000];
  ASSERT_EQ(recv(p.server, buf, 300, MSG_WAITALL), 300);
  EXPECT_EQ(TcpBytesRead(p.server), 300u);
  ASSERT_EQ(recv(p.server, buf, 700, MSG_WAITALL), 700);
  EXPECT_EQ(TcpBytesRead(p.server), 1000u);
  EXPECT_EQ(TcpBytesRead(p.client), 0u) << "the other end read nothing";
}

TEST(TcpBytesRead, IsZeroForWhatIsNotATcpSocket) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "abc", 3), 3);
  EXPECT_EQ(TcpBytesRead(fds[0]), 0u);
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(TcpBytesRead(-1), 0u);
}

// A writer sends 64 bytes at a time with pauses of a few microseconds, so
// that bytes arrive while the reader asks; after every read the answer must be
// exactly what was read so far. (Taking the count and the queue once each
// was off by what arrived between them.)
TEST(TcpBytesRead, StaysExactWhileBytesKeepArriving) {
  Pair p;
  ASSERT_GE(p.server, 0);
  constexpr int kChunks = 60000;
  constexpr int kChunk = 64;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    const std::string chunk(kChunk, 'y');
    for (int i = 0; i < kChunks && !stop; ++i) {
      if (send(p.client, chunk.data(), chunk.size(), MSG_NOSIGNAL) != kChunk) return;
      // A pause of a few microseconds, varied, so that arrivals fall anywhere
      // in the reader's cycle (a sleep would last longer than the cycle).
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(1 + i % 7);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
  });
  std::uint64_t read = 0;
  int wrong = 0;
  std::string first;
  char buf[8];  // several questions for every chunk that arrives
  while (read < std::uint64_t{kChunks} * kChunk) {
    const ssize_t n = recv(p.server, buf, sizeof buf, 0);
    if (n <= 0) break;
    read += static_cast<std::uint64_t>(n);
    const std::uint64_t said = TcpBytesRead(p.server);
    if (said != read && wrong++ == 0) {
      first = "said " + std::to_string(said) + " after " + std::to_string(read) + " read";
    }
  }
  stop = true;
  writer.join();
  EXPECT_EQ(read, std::uint64_t{kChunks} * kChunk);
  EXPECT_EQ(wrong, 0) << wrong << " wrong answers; the first: " << first;
}

}  // namespace
}  // namespace gpuwatch::server
