// `pid: child` (scenario.h): a scripted GPU process bound to the caller's
// oldest running child, as the job of `gpuwatch run --demo`.
#include <signal.h>
#include <sys/wait.h>

#include "fake_nvml_fixture.h"

namespace {

pid_t Sleeper() {
  const pid_t pid = fork();
  if (pid == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

class FakeChild : public FakeNvml {
 protected:
  // Polls past the library's 200 ms cache of /proc.
  static std::vector<nvmlProcessInfo_t> ProcessesWithin(nvmlDevice_t device, std::size_t want) {
    std::vector<nvmlProcessInfo_t> procs;
    for (int i = 0; i < 100; ++i) {
      procs = Processes(device);
      if (procs.size() == want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return procs;
  }
};

constexpr const char* kChildScenario = R"(
devices:
  - processes:
      - {pid: 7, memory: 1GiB}
      - {pid: child, memory: {ramp: {from: 1GiB, per_s: 1GiB, max: 4GiB}}}
)";

TEST_F(FakeChild, AChildProcessIsListedWhileItRunsItsSeriesFromWhenItWasFirstSeen) {
  Start(Write("child.yaml", kChildScenario), 100);
  auto procs = ProcessesWithin(Device(0), 1);
  ASSERT_EQ(procs.size(), 1u) << "no child yet: only the fixed process";
  EXPECT_EQ(procs[0].pid, 7u);

  const pid_t child = Sleeper();
  procs = ProcessesWithin(Device(0), 2);
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[1].pid, static_cast<unsigned>(child));
  EXPECT_EQ(procs[1].usedGpuMemory, 1 * kGiB) << "its ramp starts when it was first listed";
  At(102);
  EXPECT_EQ(Processes(Device(0))[1].usedGpuMemory, 3 * kGiB);
  At(110);
  EXPECT_EQ(Processes(Device(0))[1].usedGpuMemory, 4 * kGiB) << "up to its max";

  const pid_t younger = Sleeper();
  EXPECT_EQ(ProcessesWithin(Device(0), 2)[1].pid, static_cast<unsigned>(child))
      << "the oldest child, not the newest";
  Reap(child);
  procs = ProcessesWithin(Device(0), 2);
  for (int i = 0; i < 100 && procs[1].pid != static_cast<unsigned>(younger); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    procs = Processes(Device(0));
  }
  EXPECT_EQ(procs[1].pid, static_cast<unsigned>(younger)) << "the next child takes its place";
  EXPECT_EQ(procs[1].usedGpuMemory, 1 * kGiB) << "and its series starts again";
  Reap(younger);
  EXPECT_EQ(ProcessesWithin(Device(0), 1).size(), 1u) << "no child: not listed";
}

TEST_F(FakeChild, PidChildAndAPidFileAreRefusedTogether) {
  setenv("GPUWATCH_FAKE_SCENARIO",
         Write("child_bad.yaml", "devices:\n  - processes:\n      - {pid: child, pid_file: /x}\n")
             .c_str(),
         1);
  EXPECT_NE(NVML(nvmlInit_v2)(), NVML_SUCCESS);
}

}  // namespace
