// The lease table: its file format and errors, pruning dead holders (a
// reused pid included), the queue, and the lease file itself: created for
// every user, never written through a link, reset when corrupt, and one
// read-modify-write at a time across processes.
#include "host/leases.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

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

TEST(LeaseTable, TicketsNeverGoBackwardsEvenIfTheCounterWasLost) {
  LeaseTable t = Sample();
  t.next_ticket = 1;
  auto back = ParseLeaseTable(LeaseTableToJson(t));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->next_ticket, 8u) << "past the highest ticket in use";
}

TEST(LeaseTable, PruneKeepsALeaseWhileAnyHolderLives) {
  LeaseTable t = Sample();
  EXPECT_EQ(t.Prune([](const LeaseHolder& h) { return h.pid == 101; }), 1)
      << "the waiter (pid 200) is dead";
  EXPECT_EQ(t.leases.size(), 1u) << "pid 101 still holds it";
  EXPECT_TRUE(t.queue.empty());
  EXPECT_EQ(t.Prune([](const LeaseHolder&) { return false; }), 1);
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
  EXPECT_EQ(*id, (LeaseHolder{4242, 777}));
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
  LeaseHolder Me() const { return *ProcessLiveness().Identify(getpid()); }
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

TEST(LeaseDirectory, TheEnvironmentWinsThenSharedMemory) {
  EXPECT_EQ(LeaseDirectory("/x/y"), fs::path("/x/y"));
  const fs::path fallback = LeaseDirectory(nullptr);
  EXPECT_TRUE(fallback == "/dev/shm/gpuwatch" || fallback == "/tmp/gpuwatch") << fallback;
  EXPECT_EQ(LeaseDirectory(""), fallback);
}

}  // namespace
}  // namespace gpuwatch::host
