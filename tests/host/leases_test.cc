// The lease table: its file format and errors, pruning dead holders (a
// reused pid included), the queue, and the lease file itself: created for
// every user, never written through a link, reset when corrupt or over its
// bounds, and one read-modify-write at a time across processes; and the
// daemon's cached reader, which parses the file once per change.
#include "host/leases.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "fake_proc.h"

namespace gpuwatch::host {
namespace {

namespace fs = std::filesystem;
using testing::FakeProcess;
using testing::FakeProcTree;

LeaseTable Sample() {
  LeaseTable t;
  t.next_ticket = 8;
  Lease l;
  l.uuid = "GPU-aaaa";
  l.device = "3";
  l.holders = {{100, 5000}, {101, 5001}};
  l.user = "alice";
  l.command = "python train.py --lr \"1e-3\"";
  l.ticket = 6;
  l.since = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'700'000'000'123));
  t.leases.push_back(l);
  Waiter w;
  w.ticket = 7;
  w.holder = {200, 6000};
  w.user = "bob";
  w.command = "gpuwatch run --gpus auto:2 --wait -- python eval.py";
  w.count = 2;
  w.wants = "2 GPUs with ≥ 40.0 GiB free";
  w.since = l.since;
  t.queue.push_back(w);
  return t;
}

TEST(LeaseTable, RoundTripsThroughItsFile) {
  const LeaseTable t = Sample();
  auto back = ParseLeaseTable(LeaseTableToJson(t));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->next_ticket, 8u);
  ASSERT_EQ(back->leases.size(), 1u);
  EXPECT_EQ(back->leases[0].holders, t.leases[0].holders);
  EXPECT_EQ(back->leases[0].command, t.leases[0].command);
  EXPECT_EQ(back->leases[0].since, t.leases[0].since);
  ASSERT_EQ(back->queue.size(), 1u);
  EXPECT_EQ(back->queue[0].wants, t.queue[0].wants);
  EXPECT_EQ(back->queue[0].count, 2);
  auto empty = ParseLeaseTable("");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->next_ticket, 1u) << "a new file is an empty table";
}

TEST(LeaseTable, ParseErrorsNameTheEntryAndTheProblem) {
  const std::pair<std::string, std::string> cases[] = {
      {"{", "lease file: "},
      {R"({"version":2,"next_ticket":1,"leases":[],"queue":[]})", "version 2 is not 1"},
      {R"({"version":1,"leases":[],"queue":[]})", "lease file.next_ticket: missing"},
      {R"({"version":1,"next_ticket":1,"leases":[{"uuid":"GPU-a","device":"0","holders":[[1]],
          "user":"a","command":"c","ticket":1,"since_ms":0}],"queue":[]})",
       "leases[0].holders[0]: expected [pid, start_ticks]"},
      {R"({"version":1,"next_ticket":1,"leases":[],"queue":[{"ticket":1,"holder":[1,2],
          "user":"a","command":"c","count":0,"wants":"","since_ms":0}]})",
       "queue[0].count: expected 1 to 4096"},
      {R"({"version":1,"next_ticket":1,"leases":[7],"queue":[]})", "leases[0]: expected an object"},
      {R"({"version":1,"next_ticket":1,"leases":[],"queue":[{"ticket":1,"holder":[1,2],
          "user":"a","command":"c","count":1,"wants":"","since_ms":-9223372036854775807}]})",
       "queue[0].since_ms: expected a time in ms since 1970"},
      {R"({"version":1,"next_ticket":1,"leases":[],"queue":[{"ticket":1,"holder":[1,2],
          "user":"a","command":"c","count":1,"wants":"","since_ms":9796052653616}]})",
       "queue[0].since_ms: expected a time in ms since 1970"},  // found by lease_fuzzer
  };
  for (const auto& [text, why] : cases) {
    auto t = ParseLeaseTable(text);
    ASSERT_FALSE(t) << text;
    EXPECT_NE(t.error().message().find(why), std::string::npos) << t.error().message();
  }
}

// `count` copies of `entry` as the leases (or the queue) of a file.
std::string FileWith(const char* list, const std::string& entry, std::size_t count) {
  std::string items;
  for (std::size_t i = 0; i < count; ++i) items += (i == 0 ? "" : ",") + entry;
  const std::string leases = std::string(list) == "leases" ? items : "";
  const std::string queue = std::string(list) == "queue" ? items : "";
  return R"({"version":1,"next_ticket":1,"leases":[)" + leases + R"(],"queue":[)" + queue + "]}";
}

TEST(LeaseTable, AFileOverItsBoundsIsRefusedNamingTheBound) {
  const std::string lease =
      R"({"uuid":"GPU-a","device":"0","holders":[[1,2]],"user":"a","command":"c","ticket":1,)"
      R"("since_ms":0})";
  const std::string waiter =
      R"({"ticket":1,"holder":[1,2],"user":"a","command":"c","count":1,"wants":"","since_ms":0})";
  ASSERT_TRUE(ParseLeaseTable(FileWith("leases", lease, kMaxLeaseEntries)))
      << "the bound itself is fine";
  const std::pair<std::string, std::string> cases[] = {
      {FileWith("leases", lease, kMaxLeaseEntries + 1),
       "lease file: 4097 leases, more than the 4096 a lease file may hold"},
      {FileWith("queue", waiter, kMaxLeaseEntries + 1),
       "lease file: 4097 waiters, more than the 4096 a lease file may hold"},
      {std::string(kMaxLeaseFileBytes + 1, ' '),
       "lease file: 1048577 bytes, more than the 1048576 (1 MiB) a lease file may hold"},
      {FileWith("leases", "0", 300'000), "lease file: more than 131072 values"},
      {std::string(100, '[') + std::string(100, ']'), "lease file: nested deeper than 8"},
  };
  for (const auto& [text, why] : cases) {
    auto t = ParseLeaseTable(text);
    ASSERT_FALSE(t) << text.substr(0, 80);
    EXPECT_NE(t.error().message().find(why), std::string::npos) << t.error().message();
  }
}

TEST(LeaseTable, TicketsNeverGoBackwardsEvenIfTheCounterWasLost) {
  LeaseTable t = Sample();
  t.next_ticket = 1;
  auto back = ParseLeaseTable(LeaseTableToJson(t));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->next_ticket, 8u) << "past the highest ticket in use";
}

TEST(LeaseTable, PruneKeepsALeaseWhileAnyHolderLives) {
  LeaseTable t = Sample();
  EXPECT_EQ(t.Prune([](const ProcessKey& h) { return h.pid == 101; }), 1)
      << "the waiter (pid 200) is dead";
  EXPECT_EQ(t.leases.size(), 1u) << "pid 101 still holds it";
  EXPECT_TRUE(t.queue.empty());
  EXPECT_EQ(t.Prune([](const ProcessKey&) { return false; }), 1);
  EXPECT_TRUE(t.leases.empty());
}

TEST(LeaseTable, PositionAndRemoveGoByTicket) {
  LeaseTable t = Sample();
  Waiter second = t.queue[0];
  second.ticket = 9;
  t.queue.push_back(second);
  EXPECT_EQ(t.Position(7), 1);
  EXPECT_EQ(t.Position(9), 2);
  EXPECT_EQ(t.Position(6), 0) << "6 holds a lease; it does not wait";
  ASSERT_NE(t.Find("GPU-aaaa"), nullptr);
  EXPECT_EQ(t.Find("GPU-aaaa")->ticket, 6u);
  EXPECT_EQ(t.Find("GPU-bbbb"), nullptr);
  EXPECT_EQ(t.Remove(6), 1);
  EXPECT_EQ(t.Find("GPU-aaaa"), nullptr);
  EXPECT_EQ(t.Remove(7), 1);
  EXPECT_EQ(t.Position(9), 1);
}

TEST(ProcessLiveness, APidReusedOrAZombieHoldsNothing) {
  FakeProcTree tree;
  FakeProcess p;
  p.pid = 4242;
  p.start_ticks = 777;
  tree.Add(p);
  FakeProcess zombie;
  zombie.pid = 4343;
  zombie.state = 'Z';
  zombie.start_ticks = 9;
  tree.Add(zombie);
  const ProcessLiveness alive(tree.proc());
  EXPECT_TRUE(alive.Alive({4242, 777}));
  EXPECT_FALSE(alive.Alive({4242, 778})) << "same pid, another process";
  EXPECT_FALSE(alive.Alive({4343, 9})) << "a zombie holds no GPU";
  EXPECT_FALSE(alive.Alive({4444, 1})) << "no such process";
  auto id = alive.Identify(4242);
  ASSERT_TRUE(id);
  EXPECT_EQ(*id, (ProcessKey{4242, 777}));
  EXPECT_FALSE(alive.Identify(4444));
}

TEST(ProcessLiveness, AProcessKilledWithSigkillIsDeadOnceReaped) {
  const ProcessLiveness live;
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  auto holder = live.Identify(static_cast<std::uint32_t>(child));
  ASSERT_TRUE(holder);
  EXPECT_TRUE(live.Alive(*holder));
  kill(child, SIGKILL);
  int status = 0;
  // Not reaped yet: a zombie, already dead for leases.
  for (int i = 0; i < 200 && live.Alive(*holder); ++i) usleep(5000);
  EXPECT_FALSE(live.Alive(*holder));
  waitpid(child, &status, 0);
  EXPECT_FALSE(live.Alive(*holder));
}

class LeaseBookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gw-leases-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  LeaseBook Book() const { return LeaseBook(dir_ / "run", ProcessLiveness()); }
  ProcessKey Me() const { return *ProcessLiveness().Identify(getpid()); }
  fs::path dir_;
};

TEST_F(LeaseBookTest, NoFileReadsAsEmptyAndTheFirstUpdateMakesItForEveryUser) {
  auto t = Book().Read();
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_TRUE(t->leases.empty());
  const mode_t old_umask = umask(077);
  const Status s = Book().Update([&](LeaseTable& table) {
    Lease l;
    l.uuid = "GPU-x";
    l.device = "0";
    l.holders = {Me()};
    table.leases.push_back(l);
  });
  umask(old_umask);
  ASSERT_TRUE(s.ok()) << s.message();
  struct stat st {};
  ASSERT_EQ(stat((dir_ / "run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u) << "sticky and open to all, as /tmp";
  ASSERT_EQ(stat(Book().file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u) << "every user's jobs write it, whatever the umask";
  t = Book().Read();
  ASSERT_TRUE(t);
  ASSERT_EQ(t->leases.size(), 1u);
  EXPECT_EQ(t->leases[0].uuid, "GPU-x");
}

TEST_F(LeaseBookTest, DeadHoldersArePrunedOnRead) {
  ASSERT_TRUE(Book()
                  .Update([&](LeaseTable& t) {
                    Lease l;
                    l.uuid = "GPU-dead";
                    l.holders = {{Me().pid, Me().start_ticks + 1}};  // a previous owner of our pid
                    t.leases.push_back(l);
                  })
                  .ok());
  auto t = Book().Read();
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->leases.empty());
}

TEST_F(LeaseBookTest, ACorruptFileIsReplacedAndTheWarningNamesIt) {
  fs::create_directories(dir_ / "run");
  std::ofstream(Book().file()) << "{ half a table";
  auto read = Book().Read();
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message().find("leases.json"), std::string::npos);
  std::string warning;
  ASSERT_TRUE(Book().Update([](LeaseTable&) {}, &warning).ok());
  EXPECT_NE(warning.find("leases.json"), std::string::npos) << warning;
  EXPECT_NE(warning.find("starting from an empty table"), std::string::npos) << warning;
  EXPECT_TRUE(Book().Read()) << "the file is whole again";
}

TEST_F(LeaseBookTest, NeverWritesThroughALink) {
  fs::create_directories(dir_ / "run");
  std::ofstream(dir_ / "victim") << "precious";
  fs::create_symlink(dir_ / "victim", Book().file());
  const Status s = Book().Update([](LeaseTable& t) { t.next_ticket = 99; });
  EXPECT_FALSE(s.ok());
  std::ifstream in(dir_ / "victim");
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
}

TEST_F(LeaseBookTest, ConcurrentUpdatesFromManyProcessesLoseNone) {
  constexpr int kProcesses = 6;
  constexpr int kEach = 40;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t c = fork();
    if (c == 0) {
      for (int k = 0; k < kEach; ++k) {
        if (!Book().Update([](LeaseTable& t) { t.next_ticket++; }).ok()) _exit(1);
      }
      _exit(0);
    }
    children.push_back(c);
  }
  for (pid_t c : children) {
    int status = 0;
    waitpid(c, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto t = Book().Read();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->next_ticket, 1u + kProcesses * kEach) << "every increment under the lock";
}

// This process's peak resident memory in KiB, after `reset` restarts it.
std::optional<long> PeakKib(bool reset) {
  if (reset && !(std::ofstream("/proc/self/clear_refs") << "5")) return std::nullopt;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
  }
  return std::nullopt;
}

TEST_F(LeaseBookTest, AnOversizedFileIsRefusedUnreadNamingTheBoundAndReplacedByTheNextUpdate) {
  // The 26 MB file of the probe (sparse: zeros), which every local user can write.
  fs::create_directories(dir_ / "run");
  { std::ofstream(Book().file()) << "{"; }
  fs::resize_file(Book().file(), 26'000'000);
  const auto before = PeakKib(/*reset=*/true);
  auto read = Book().Read();
  const auto after = PeakKib(false);
  ASSERT_FALSE(read);
  EXPECT_EQ(
      read.error().message(),
      Book().file().string() +
          ": lease file: 26000000 bytes, more than the 1048576 (1 MiB) a lease file may hold");
  if (before && after) {
    EXPECT_LT(*after - *before, 4 * 1024) << "KiB: the file is never read whole";
  }
  std::string warning;
  ASSERT_TRUE(Book().Update([](LeaseTable&) {}, &warning).ok());
  EXPECT_NE(warning.find("leases.json: lease file: 26000000 bytes, more than the 1048576"),
            std::string::npos)
      << warning;
  EXPECT_NE(warning.find("starting from an empty table"), std::string::npos) << warning;
  EXPECT_LT(fs::file_size(Book().file()), 1000u);
  EXPECT_TRUE(Book().Read()) << "the file is whole again";
}

TEST_F(LeaseBookTest, AChangePastTheBoundsIsRefusedAndNotWritten) {
  ASSERT_TRUE(Book().Update([](LeaseTable& t) { t.next_ticket = 5; }).ok());
  const Status s = Book().Update([&](LeaseTable& t) {
    for (std::size_t i = 0; i <= kMaxLeaseEntries; ++i) {
      Waiter w;
      w.ticket = t.next_ticket++;
      w.holder = Me();
      t.queue.push_back(w);
    }
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("0 leases and 4097 waiters would be more than the 4096"),
            std::string::npos)
      << s.message();
  auto t = Book().Read();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->next_ticket, 5u) << "left as it was";
}

class LeaseCacheTest : public LeaseBookTest {
 protected:
  // A table holding GPU-x for this process, with `next_ticket` (same width,
  // same file size) and a fixed time.
  void Write(std::uint64_t next_ticket) {
    ASSERT_TRUE(Book()
                    .Update([&](LeaseTable& t) {
                      t.leases.clear();
                      Lease l;
                      l.uuid = "GPU-x";
                      l.device = "0";
                      l.holders = {Me()};
                      l.ticket = 1;
                      t.leases.push_back(l);
                      t.next_ticket = next_ticket;
                    })
                    .ok());
  }
  struct stat Stat() const {
    struct stat st {};
    EXPECT_EQ(stat(Book().file().c_str(), &st), 0);
    return st;
  }
};

TEST_F(LeaseCacheTest, ReadsOfAnUnchangedFileFromManyThreadsParseItOnce) {
  Write(11);
  LeaseCache cache(Book(), nullptr, std::chrono::nanoseconds(0));
  std::atomic<int> good = 0;
  std::vector<std::thread> readers;
  for (int i = 0; i < 8; ++i) {
    readers.emplace_back([&] {
      for (int k = 0; k < 50; ++k) {
        auto t = cache.Read();
        if (t && t->leases.size() == 1 && t->next_ticket == 11) ++good;
      }
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(good, 400);
  EXPECT_EQ(cache.loads(), 1u) << "one parse for 400 reads";
}

TEST_F(LeaseCacheTest, AChangeOfTheSameSizeWithTheSameTimesIsSeen) {
  Write(11);
  LeaseCache cache(Book(), nullptr, std::chrono::nanoseconds(0));
  ASSERT_EQ(cache.Read()->next_ticket, 11u);
  const struct stat was = Stat();
  Write(12);
  // The same size and, put back, the same modification time to the nanosecond:
  // only the change time, which no user can set, tells.
  const timespec times[2] = {was.st_atim, was.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, Book().file().c_str(), times, 0), 0);
  ASSERT_EQ(Stat().st_size, was.st_size);
  ASSERT_EQ(Stat().st_mtim.tv_nsec, was.st_mtim.tv_nsec);
  auto t = cache.Read();
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->next_ticket, 12u);
  EXPECT_EQ(cache.loads(), 2u);
}

TEST_F(LeaseCacheTest, AVersionYoungerThanSettleIsReadAgainAtEachCall) {
  // Two writes within one tick of the file system's clock can leave the same
  // stamp, so a version is trusted only once older than `settle`.
  Write(11);
  LeaseCache young(Book(), nullptr, std::chrono::hours(1));
  for (int i = 0; i < 5; ++i) ASSERT_EQ(young.Read()->next_ticket, 11u);
  EXPECT_EQ(young.loads(), 5u);
  LeaseCache old(Book(), nullptr, std::chrono::nanoseconds(0));
  for (int i = 0; i < 5; ++i) ASSERT_EQ(old.Read()->next_ticket, 11u);
  EXPECT_EQ(old.loads(), 1u);
  for (std::uint64_t ticket = 12; ticket < 40; ++ticket) {
    Write(ticket);
    ASSERT_EQ(young.Read()->next_ticket, ticket);
  }
}

TEST_F(LeaseCacheTest, ADeadHoldersLeaseGoesThoughTheFileIsUnchanged) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  auto holder = ProcessLiveness().Identify(static_cast<std::uint32_t>(child));
  ASSERT_TRUE(holder);
  ASSERT_TRUE(Book()
                  .Update([&](LeaseTable& t) {
                    Lease l;
                    l.uuid = "GPU-child";
                    l.holders = {*holder};
                    t.leases.push_back(l);
                  })
                  .ok());
  LeaseCache cache(Book(), nullptr, std::chrono::nanoseconds(0));
  ASSERT_EQ(cache.Read()->leases.size(), 1u);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  auto t = cache.Read();
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->leases.empty()) << "liveness is checked at every read";
  EXPECT_EQ(cache.loads(), 1u);
}

TEST_F(LeaseCacheTest, AnOversizedFileWarnsOncePerVersionNamingTheBound) {
  fs::create_directories(dir_ / "run");
  { std::ofstream(Book().file()) << "{"; }
  fs::resize_file(Book().file(), 2 * kMaxLeaseFileBytes);
  std::vector<std::string> warnings;
  LeaseCache cache(Book(), [&](const std::string& w) { warnings.push_back(w); });
  for (int i = 0; i < 5; ++i) {
    auto t = cache.Read();
    ASSERT_FALSE(t);
    EXPECT_NE(t.error().message().find("2097152 bytes, more than the 1048576 (1 MiB)"),
              std::string::npos)
        << t.error().message();
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], Book().file().string() +
                             ": lease file: 2097152 bytes, more than the 1048576 (1 MiB) a lease "
                             "file may hold");
  Write(11);
  auto t = cache.Read();
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->leases.size(), 1u) << "replaced: read again";
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(LeaseDirectory, TheEnvironmentWinsThenSharedMemory) {
  EXPECT_EQ(LeaseDirectory("/x/y"), fs::path("/x/y"));
  const fs::path fallback = LeaseDirectory(nullptr);
  EXPECT_TRUE(fallback == "/dev/shm/gpuwatch" || fallback == "/tmp/gpuwatch") << fallback;
  EXPECT_EQ(LeaseDirectory(""), fallback);
}

}  // namespace
}  // namespace gpuwatch::host
