#include "transport/job_protocol.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "transport/job_socket.h"

namespace gpuwatch {
namespace {

TEST(JobProtocol, ParsesMarks) {
  auto step = ParseJobMessage("mark step=1200");
  ASSERT_TRUE(step) << step.error().message();
  EXPECT_EQ(step->kind, JobMessage::Kind::kMark);
  EXPECT_EQ(step->mark, "step");
  EXPECT_EQ(step->mark_value, "1200");
  auto phase = ParseJobMessage("mark phase=eval\r");
  ASSERT_TRUE(phase);
  EXPECT_EQ(phase->mark_value, "eval");
}

TEST(JobProtocol, ParsesFrameworkMemory) {
  auto m = ParseJobMessage(
      "mem framework=torch device=1 allocated=1073741824 reserved=2147483648 pid=77");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->kind, JobMessage::Kind::kMemory);
  EXPECT_EQ(m->framework, "torch");
  EXPECT_EQ(m->device, 1);
  EXPECT_EQ(m->bytes.at("allocated"), 1073741824.0);
  EXPECT_EQ(m->bytes.at("reserved"), 2147483648.0);
  EXPECT_EQ(m->pid, 77u);
  EXPECT_EQ(m->bytes.count("pid"), 0u);
  EXPECT_TRUE(m->uuid.empty());
  auto named = ParseJobMessage("mem framework=torch device=0 uuid=GPU-8f0c-aa allocated=5");
  ASSERT_TRUE(named) << named.error().message();
  EXPECT_EQ(named->uuid, "GPU-8f0c-aa");
  EXPECT_EQ(named->bytes.count("uuid"), 0u) << "a name, not a counter";
}

TEST(JobProtocol, RejectsBadLinesSayingWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"launch rockets", "unknown message \"launch\""},
      {"mark", "mark needs step=N"},
      {"mark step=abc", "step=abc is not a number"},
      {"mark step=1 epoch=2", "one mark per line"},
      {"mem device=0 allocated=1", "mem needs framework="},
      {"mem framework=torch allocated=1", "mem needs device=N"},
      {"mem framework=torch device=0", "at least one counter"},
      {"mem framework=torch device=0 allocated=-5", "allocated=-5 is not a byte count"},
      {"mark step", "\"step\" is not key=value"},
      {"hello pid=x", "pid=x is not a pid"},
      {"mark phase=$(rm)", "keys and values are words"},
  };
  for (const auto& [line, why] : cases) {
    auto m = ParseJobMessage(line);
    ASSERT_FALSE(m) << line;
    EXPECT_NE(m.error().message().find(why), std::string::npos)
        << line << " -> " << m.error().message();
  }
  EXPECT_FALSE(ParseJobMessage(std::string(5000, 'a')));
}

TEST(JobSocket, ReceivesLinesFromARealClientAndCountsBadOnes) {
  auto socket = JobSocket::Create();
  ASSERT_TRUE(socket) << socket.error().message();
  const std::string cmd =
      "GPUWATCH_SOCKET=" + (*socket)->path() + " " + GPUWATCH_BINARY_DIR +
      "/tests/transport/job_client 'hello framework=torch version=2.11' 'mark step=1' "
      "'mem framework=torch device=0 allocated=100 reserved=200' 'nonsense' 'mark epoch=2'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::vector<JobSocket::Received> got;
  for (int i = 0; i < 100 && got.size() < 4; ++i) {
    for (auto& r : (*socket)->Drain()) got.push_back(std::move(r));
    if (got.size() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].message.kind, JobMessage::Kind::kHello);
  EXPECT_EQ(got[1].message.mark_value, "1");
  EXPECT_EQ(got[2].message.bytes.at("reserved"), 200.0);
  EXPECT_EQ(got[3].message.mark, "epoch");
  EXPECT_EQ((*socket)->bad_lines(), 1u);
  const auto errors = (*socket)->DrainErrors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("line 4"), std::string::npos) << errors[0];
  const std::string path = (*socket)->path();
  socket->reset();
  EXPECT_FALSE(std::filesystem::exists(path)) << "the socket and its directory are removed";
}

// Connects to the Unix socket at `path` and sends `text`; the fd stays open.
int SendTo(const std::string& path, const std::string& text) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  return fd;
}

TEST(JobSocket, AtAPathForTheDaemonNamesTheSenderAndGuardsThePath) {
  const std::string path = ::testing::TempDir() + "gw-sock-" + std::to_string(getpid());
  std::filesystem::remove(path);
  std::ofstream(path) << "not a socket";
  auto blocked = JobSocket::CreateAt(path);
  ASSERT_FALSE(blocked);
  EXPECT_NE(blocked.error().message().find("not a socket is in the way"), std::string::npos)
      << blocked.error().message();
  std::filesystem::remove(path);

  auto socket = JobSocket::CreateAt(path);
  ASSERT_TRUE(socket) << socket.error().message();
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms(0666))
      << "any local job may report";
  auto second = JobSocket::CreateAt(path);
  ASSERT_FALSE(second) << "a live socket is not taken over";
  EXPECT_NE(second.error().message().find("another process serves it"), std::string::npos);

  const int fd = SendTo(path, "mem framework=torch device=1 allocated=5 pid=1\n");
  ASSERT_GE(fd, 0);
  std::vector<JobSocket::Received> got;
  for (int i = 0; i < 100 && got.empty(); ++i) {
    got = (*socket)->Drain();
    if (got.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  close(fd);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].sender_pid);
  EXPECT_EQ(*got[0].sender_pid, static_cast<std::uint32_t>(getpid()))
      << "the kernel's word, not the pid=1 the line claims";
  socket->reset();
  EXPECT_FALSE(std::filesystem::exists(path)) << "removed on destruction";

  // A socket left behind by a daemon that died is replaced.
  {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int stale = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_EQ(bind(stale, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    close(stale);
  }
  auto replaced = JobSocket::CreateAt(path);
  EXPECT_TRUE(replaced) << replaced.error().message();
}

TEST(MarkLimiter, ABurstThenTheRateAndOneWarningPerSender) {
  MarkLimiter limiter(10, 100);
  const auto t0 = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(limiter.Take(7, t0), MarkLimiter::Verdict::kPass) << i;
  EXPECT_EQ(limiter.Take(7, t0), MarkLimiter::Verdict::kFirstDrop);
  EXPECT_EQ(limiter.Take(7, t0), MarkLimiter::Verdict::kDrop) << "one warning per sender";
  EXPECT_EQ(limiter.Take(8, t0), MarkLimiter::Verdict::kPass) << "each sender has its own";
  const auto t1 = t0 + std::chrono::seconds(1);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(limiter.Take(7, t1), MarkLimiter::Verdict::kPass) << i;
  EXPECT_EQ(limiter.Take(7, t1), MarkLimiter::Verdict::kDrop);
}

std::string DaemonSocketPath(const char* name) {
  const std::string path = ::testing::TempDir() + "gw-" + name + "-" + std::to_string(getpid());
  std::filesystem::remove(path);
  return path;
}

TEST(JobSocket, AMarkFloodFromOneSenderIsLimitedAndCounted) {
  auto socket = JobSocket::CreateAt(DaemonSocketPath("marks"));
  ASSERT_TRUE(socket) << socket.error().message();
  const auto start = std::chrono::steady_clock::now();
  std::string flood;
  for (int i = 0; i < 20'000; ++i) flood += "mark step=" + std::to_string(i) + "\n";
  flood += "mem framework=torch device=0 allocated=7\n";
  const int fd = SendTo((*socket)->path(), flood);
  ASSERT_GE(fd, 0);
  std::vector<JobSocket::Received> got;
  for (int i = 0; i < 500 && (got.empty() || got.back().message.kind != JobMessage::Kind::kMemory);
       ++i) {
    for (auto& r : (*socket)->Drain()) got.push_back(std::move(r));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  close(fd);
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().message.kind, JobMessage::Kind::kMemory) << "memory is not limited";
  const std::uint64_t marks = got.size() - 1;
  EXPECT_GE(marks, 100u) << "the burst";
  EXPECT_LE(marks, 100u + static_cast<std::uint64_t>(10 * elapsed_s) + 1);
  EXPECT_EQ(got[99].message.mark_value, "99");
  EXPECT_EQ((*socket)->dropped_marks(), 20'000u - marks) << "every other mark is counted";
  const auto errors = (*socket)->DrainErrors();
  ASSERT_EQ(errors.size(), 1u) << "one warning for the sender";
  EXPECT_EQ(errors[0], "pid " + std::to_string(getpid()) +
                           " sends more than 10 marks a second (after a burst of 100): the rest "
                           "are dropped");
}

TEST(JobSocket, AFloodOfIdleConnectionsDoesNotStopANewJobsReport) {
  auto socket = JobSocket::CreateAt(DaemonSocketPath("idle"));
  ASSERT_TRUE(socket) << socket.error().message();
  const std::string path = (*socket)->path();
  constexpr int kIdle = 3000;
  std::atomic<int> opened = 0;
  std::vector<int> idle;
  std::thread flood([&] {
    for (int i = 0; i < kIdle; ++i) {
      const int fd = SendTo(path, "");
      if (fd >= 0) idle.push_back(fd);
      ++opened;
    }
  });
  while (opened < kIdle / 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Another process, halfway through the flood.
  const std::string cmd =
      "GPUWATCH_SOCKET=" + path + " " + GPUWATCH_BINARY_DIR +
      "/tests/transport/job_client 'mem framework=torch device=0 allocated=123'";
  const int rc = std::system(cmd.c_str());
  flood.join();
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(idle.size(), static_cast<std::size_t>(kIdle)) << "every connection was taken";
  std::vector<JobSocket::Received> got;
  for (int i = 0; i < 250 && got.empty(); ++i) {
    got = (*socket)->Drain();
    if (got.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(got.size(), 1u) << "the job's report got through";
  EXPECT_EQ(got[0].message.bytes.at("allocated"), 123.0);
  ASSERT_TRUE(got[0].sender_pid);
  EXPECT_NE(*got[0].sender_pid, static_cast<std::uint32_t>(getpid()));
  // A connect returns once the connection is queued, not accepted: under
  // load the server may still be taking the last ones.
  const auto closed_enough = [&] {
    return (*socket)->closed_idle() >= static_cast<std::uint64_t>(kIdle - 256);
  };
  for (int i = 0; i < 500 && !closed_enough(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(closed_enough()) << (*socket)->closed_idle();
  for (int fd : idle) close(fd);
  const auto errors = (*socket)->DrainErrors();
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("256 connections open: closing the longest idle of pid " +
                           std::to_string(getpid()) + " for new ones"),
            std::string::npos)
      << errors[0];
}

TEST(JobSocket, ABadLineIsQuotedWithItsControlCharactersWrittenOut) {
  // `run` and `serve` print these errors on the terminal and in their log.
  auto socket = JobSocket::Create();
  ASSERT_TRUE(socket) << socket.error().message();
  const int fd = SendTo((*socket)->path(), "\x1b]0;owned\x07\x1b[2J\r\n");
  ASSERT_GE(fd, 0);
  std::vector<std::string> errors;
  for (int i = 0; i < 100 && errors.empty(); ++i) {
    errors = (*socket)->DrainErrors();
    if (errors.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  close(fd);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(
      errors[0],
      "line 1 from a client: unknown message \"\\x1b]0;owned\\x07\\x1b[2J\" (hello, mem, mark)");
}

}  // namespace
}  // namespace gpuwatch
