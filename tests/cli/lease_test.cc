// Leases and the wait queue end to end, on a fake fleet of eight idle GPUs
// (scenarios/test/idle8.yaml) where only leases decide who gets what: 20
// concurrent `run --gpus auto:1 --wait` never share a GPU and start in
// arrival order; a holder killed with -9 gives its GPU back; the wait's
// timeout, Ctrl-C and the queue's fairness; every bad value.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_util.h"
#include "host/leases.h"

namespace {
namespace fs = std::filesystem;
using gpuwatch::host::LeaseBook;
using gpuwatch::host::LeaseTable;
using gpuwatch::host::ProcessLiveness;
using gpuwatch::testing::CmdResult;
using gpuwatch::testing::Gpuwatch;
using gpuwatch::testing::Lines;
using gpuwatch::testing::Slurp;

const std::string kIdle8 = "--scenario scenarios/test/idle8.yaml ";

class LeaseFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gw-lease-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    for (pid_t p : background_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  std::string Env() const { return "GPUWATCH_RUNTIME_DIR=" + (dir_ / "run").string(); }
  CmdResult Select(const std::string& args) const {
    return Gpuwatch(kIdle8 + "select " + args, Env());
  }
  LeaseTable Table() const {
    auto t = LeaseBook(dir_ / "run", ProcessLiveness()).Read();
    EXPECT_TRUE(t) << t.error().message();
    return t ? *t : LeaseTable{};
  }
  // `sh -c CMD` in the source directory, in the background; its pid.
  pid_t Background(const std::string& cmd) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (chdir(GPUWATCH_SOURCE_DIR) != 0) _exit(127);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    background_.push_back(pid);
    return pid;
  }
  // The exit status of a background process (-1: killed by a signal).
  int Reap(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    std::erase(background_, pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // The shell command that runs `gpuwatch ARGS` on the idle fleet.
  std::string Command(const std::string& args) const {
    return "exec env GPUWATCH_FAKE_TIME=100 " + Env() + " " + GPUWATCH_BINARY_DIR + "/gpuwatch " +
           kIdle8 + args;
  }
  // Waits up to 20 s for `ready` to hold of the lease table.
  bool WaitFor(const std::function<bool(const LeaseTable&)>& ready) const {
    for (int i = 0; i < 400; ++i) {
      if (ready(Table())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // Leases GPUs to a `sleep` that lives until the test kills it; its pid.
  pid_t HoldWithSleep(int gpus) {
    const pid_t sleeper = Background("exec sleep 120");
    const CmdResult r = Select(Count(gpus) + " --lease --lease-owner " + std::to_string(sleeper));
    EXPECT_EQ(r.code, 0) << r.err;
    return sleeper;
  }
  static std::string Count(int n) { return "-n " + std::to_string(n); }

  fs::path dir_;
  std::vector<pid_t> background_;
};

TEST_F(LeaseFixture, TwentyWaitersNeverShareAGpuAndStartInArrivalOrder) {
  constexpr int kJobs = 20;
  const fs::path log = dir_ / "log";
  std::vector<pid_t> runs;
  // Each job holds its GPU until eight jobs have started, so that eight leases stand at once
  // (each must be a GPU of its own) however staggered the runs' start under load; without it,
  // runs starting slowly one after another could share a few GPUs in turn.
  for (int i = 0; i < kJobs; ++i) {
    const std::string job = "sh -c 'echo \"$CUDA_VISIBLE_DEVICES $(date +%s%N) start\" >> " +
                            log.string() + "; n=0; while [ \"$(grep -c start " + log.string() +
                            ")\" -lt 8 ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done"
                            "; sleep 0.5; echo \"$CUDA_VISIBLE_DEVICES $(date +%s%N) end\" >> " +
                            log.string() + "'";
    runs.push_back(
        Background(Command("run -q -i 1s --gpus auto:1 --wait --json " +
                           (dir_ / (std::to_string(i) + ".json")).string() + " -- " + job)));
  }
  for (pid_t p : runs) EXPECT_EQ(Reap(p), 0);

  // Tickets are the arrival order; each job's lease says when it was granted.
  std::map<std::uint64_t, std::int64_t> granted;  // ticket -> ns
  std::map<std::uint64_t, std::string> device;
  for (int i = 0; i < kJobs; ++i) {
    const auto j = nlohmann::json::parse(Slurp(dir_ / (std::to_string(i) + ".json")));
    ASSERT_TRUE(j["lease"].is_object()) << j.dump();
    const auto ticket = j["lease"]["ticket"].get<std::uint64_t>();
    ASSERT_EQ(j["lease"]["devices"].size(), 1u);
    EXPECT_TRUE(granted.emplace(ticket, j["lease"]["granted_at_ns"].get<std::int64_t>()).second)
        << "ticket " << ticket << " given twice";
    device[ticket] = j["lease"]["devices"][0].get<std::string>();
  }
  ASSERT_EQ(granted.size(), static_cast<std::size_t>(kJobs));
  EXPECT_EQ(granted.begin()->first, 1u);
  EXPECT_EQ(granted.rbegin()->first, static_cast<std::uint64_t>(kJobs));
  std::int64_t previous = 0;
  for (const auto& [ticket, at] : granted) {
    EXPECT_GT(at, previous) << "ticket " << ticket << " was served before an earlier arrival";
    previous = at;
  }

  // What the jobs saw: on each GPU one job at a time, and the 12 that could
  // not start at once started only as others finished.
  std::map<std::string, std::vector<std::pair<std::int64_t, bool>>> by_gpu;
  std::vector<std::int64_t> ends;
  for (const std::string& line : Lines(Slurp(log))) {
    std::istringstream in(line);
    std::string gpu, what;
    std::int64_t at = 0;
    in >> gpu >> at >> what;
    by_gpu[gpu].push_back({at, what == "start"});
    if (what == "end") ends.push_back(at);
  }
  EXPECT_EQ(by_gpu.size(), 8u) << "every GPU was used";
  EXPECT_EQ(ends.size(), static_cast<std::size_t>(kJobs));
  for (auto& [gpu, events] : by_gpu) {
    std::sort(events.begin(), events.end());
    for (std::size_t k = 0; k < events.size(); ++k) {
      EXPECT_EQ(events[k].second, k % 2 == 0) << "GPU " << gpu << ": two jobs at once";
    }
  }
  for (const auto& [ticket, at] : granted) {
    if (ticket <= 8) continue;
    const std::int64_t granted_at = at;  // clang 14 lambdas cannot capture a binding
    const auto ended_before =
        std::count_if(ends.begin(), ends.end(), [&](std::int64_t e) { return e < granted_at; });
    EXPECT_GE(ended_before, static_cast<long>(ticket - 8))
        << "ticket " << ticket << " started before a GPU was free for it";
  }
  EXPECT_TRUE(Table().leases.empty()) << "every lease went back";
  EXPECT_TRUE(Table().queue.empty());
}

TEST_F(LeaseFixture, ASelectLeaseHolderKilledWithSigkillGivesItsGpusBack) {
  const pid_t sleeper = HoldWithSleep(8);
  CmdResult r = Select("");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("GPU 0: leased to pid " + std::to_string(sleeper)), std::string::npos)
      << r.err;
  kill(sleeper, SIGKILL);
  Reap(sleeper);
  r = Select("-n 8");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0,1,2,3,4,5,6,7\n");
}

TEST_F(LeaseFixture, ReleaseGivesBackTheCallersLeases) {
  const pid_t sleeper = HoldWithSleep(3);
  EXPECT_EQ(Table().leases.size(), 3u);
  const CmdResult r = Select("--release --lease-owner " + std::to_string(sleeper));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("released 3 leases"), std::string::npos) << r.err;
  EXPECT_TRUE(Table().leases.empty());
}

TEST_F(LeaseFixture, ARunKilledWithSigkillLeavesTheLeaseToItsJobUntilTheJobDies) {
  const pid_t run = Background(Command("run -q -i 1s --gpus auto:8 -- sleep 120"));
  ASSERT_TRUE(WaitFor([](const LeaseTable& t) {
    return t.leases.size() == 8 && t.leases[0].holders.size() == 2;
  })) << "the job joins gpuwatch as a holder";
  const std::uint32_t job = Table().leases[0].holders[1].pid;
  kill(run, SIGKILL);
  Reap(run);
  CmdResult r = Select("");
  EXPECT_EQ(r.code, 1) << "the job still runs on its GPUs";
  kill(static_cast<pid_t>(job), SIGKILL);
  ASSERT_TRUE(WaitFor([](const LeaseTable& t) { return t.leases.empty(); }));
  r = Select("-n 8");
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(LeaseFixture, AWaitThatTimesOutExits75AndLeavesTheQueue) {
  HoldWithSleep(8);
  const pid_t run =
      Background(Command("run --gpus auto:1 --wait 300ms -- true 2> " + (dir_ / "err").string()));
  EXPECT_EQ(Reap(run), 75);
  const std::string err = Slurp(dir_ / "err");
  EXPECT_NE(err.find("waiting for 1 GPU: first in the queue; 0 of 8 qualify; 0: leased to pid"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("gave up after"), std::string::npos) << err;
  EXPECT_NE(err.find("waiting for 1 GPU (first in the queue); not started"), std::string::npos)
      << err;
  EXPECT_TRUE(Table().queue.empty());
}

TEST_F(LeaseFixture, SelectCanWaitToo) {
  HoldWithSleep(8);
  const CmdResult r = Select("--wait 200ms");
  EXPECT_EQ(r.code, 75);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("gpuwatch select: gave up after"), std::string::npos) << r.err;
  EXPECT_TRUE(Table().queue.empty());
}

TEST_F(LeaseFixture, CtrlCLeavesTheQueueCleanly) {
  HoldWithSleep(8);
  const pid_t run =
      Background(Command("run --gpus auto:1 --wait -- true 2> " + (dir_ / "err").string()));
  ASSERT_TRUE(WaitFor([](const LeaseTable& t) { return t.queue.size() == 1; }));
  kill(run, SIGINT);
  EXPECT_EQ(Reap(run), 130);
  EXPECT_NE(Slurp(dir_ / "err").find("left the queue (signal 2)"), std::string::npos)
      << Slurp(dir_ / "err");
  EXPECT_TRUE(Table().queue.empty());
}

TEST_F(LeaseFixture, NobodyOvertakesAWaiter) {
  HoldWithSleep(7);  // GPU 7 stays free
  const pid_t waiter = Background(Command("run -q --gpus auto:2 --wait -- true"));
  ASSERT_TRUE(WaitFor([](const LeaseTable& t) { return t.queue.size() == 1; }));
  CmdResult r = Select("--lease");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("1 job already waits for GPUs on this machine; add --wait"),
            std::string::npos)
      << r.err;
  r = Select("");
  EXPECT_EQ(r.code, 0) << "looking without leasing takes nothing from the waiter: " << r.err;
  EXPECT_EQ(r.out, "7\n");
  kill(waiter, SIGTERM);
  EXPECT_EQ(Reap(waiter), 128 + SIGTERM);
}

TEST_F(LeaseFixture, EverythingAfterTheFirstDashDashIsTheJobsEvenAfterWait) {
  // --wait takes an optional value: CLI11 used to swallow the "--" after it
  // and then parse the job's --lr as gpuwatch's own.
  const std::string job =
      "sh -c 'printf \"%s|\" \"$@\" > " + (dir_ / "argv").string() + "' sh --lr 3 -- --wait -lms";
  for (const std::string wait : {"--wait 30m", "--wait"}) {
    const CmdResult r = Gpuwatch(kIdle8 + "run -q --gpus auto:1 " + wait + " -- " + job, Env());
    ASSERT_EQ(r.code, 0) << wait << ": " << r.err;
    EXPECT_EQ(Slurp(dir_ / "argv"), "--lr|3|--|--wait|-lms|") << wait;
  }
  const CmdResult before = Gpuwatch(kIdle8 + "run -q python -- train.py", Env());
  EXPECT_EQ(before.code, 2);
  EXPECT_NE(before.err.find("\"python\" comes before the --: put the whole command after it"),
            std::string::npos)
      << before.err;
}

TEST_F(LeaseFixture, BadValuesAreUsageErrorsNamingTheOption) {
  const std::pair<std::string, std::string> cases[] = {
      {"run --gpus auto:0 -- true", "--gpus \"auto:0\": expected auto:N with N from 1 to 4096"},
      {"run --gpus auto:two -- true", "--gpus \"auto:two\": expected auto:N"},
      {"run --gpus 0 --min-free 1GiB -- true", "use them with --gpus auto:N"},
      {"run --wait -- true", "use them with --gpus auto:N"},
      {"run --gpus auto --wait 5parsecs -- true", "--wait: \"5parsecs\" is not a duration"},
      {"run --gpus auto:2 --max-util 101 -- true", "--max-util \"101\": expected a percentage"},
      {"select --release --lease-owner 4000000000", "--lease-owner 4000000000: no process"},
  };
  for (const auto& [args, why] : cases) {
    const CmdResult r = Gpuwatch(kIdle8 + args, Env());
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "run" / "leases.json")) << "nothing was leased or queued";
}

}  // namespace
