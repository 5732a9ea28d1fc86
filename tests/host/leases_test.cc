// The lease file (the table itself: lease_table_test.cc): created for every
// user, never written through a link, reset when corrupt or over its bounds,
// and one read-modify-write at a time across processes; the daemon's cached
// reader, which parses the file once per change; where the file lives.
#include "host/leases.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

namespace gpuwatch::host {
namespace {

namespace fs = std::filesystem;

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
