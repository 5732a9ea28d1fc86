// The lease table: its file format and errors, its bounds, tickets, pruning
// dead holders (a reused pid or a zombie included) and the queue's order;
// and how a holder's liveness is told. The file it lives in: leases_test.cc.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <utility>

#include "fake_proc.h"
#include "host/leases.h"

namespace gpuwatch::host {
namespace {

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

}  // namespace
}  // namespace gpuwatch::host
