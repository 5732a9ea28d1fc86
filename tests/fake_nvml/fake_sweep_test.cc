// Sweep processes (scenario.h `memory_of_bs`): `pid: child` with a memory
// expression of bs, bound to the caller's children that carry
// GPUWATCH_SWEEP_VALUE, listed at what the expression gives, and granted no
// more than the device has left.
#include <signal.h>
#include <sys/wait.h>

#include "fake_nvml_fixture.h"

namespace {

// A child that sleeps with GPUWATCH_SWEEP_VALUE=value (none: 0).
pid_t SweepChild(int value) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (value > 0) setenv("GPUWATCH_SWEEP_VALUE", std::to_string(value).c_str(), 1);
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

class FakeSweep : public FakeNvml {
 protected:
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

constexpr const char* kSweepScenario = R"(
devices:
  - memory_total: 10GiB
    processes:
      - {pid: 7, memory: 1GiB}
      - {pid: child, memory: "1GiB + 64MiB*bs + 1MiB*bs^2"}
      - {pid: child, memory: "1GiB + 64MiB*bs + 1MiB*bs^2"}
)";

TEST_F(FakeSweep, ChildrenWithAValueGetTheExpressionUpToWhatIsLeft) {
  Start(Write("sweep.yaml", kSweepScenario));
  const pid_t plain = SweepChild(0);
  const pid_t first = SweepChild(16);  // 1 GiB + 1 GiB + 256 MiB
  auto procs = ProcessesWithin(Device(0), 2);
  ASSERT_EQ(procs.size(), 2u) << "the child without a value is not a sweep run";
  EXPECT_EQ(procs[1].pid, static_cast<unsigned>(first));
  EXPECT_EQ(procs[1].usedGpuMemory, 2 * kGiB + 256 * kMiB);
  const pid_t second = SweepChild(64);  // 1 GiB + 4 GiB + 4 GiB: more than the 5.75 GiB left
  procs = ProcessesWithin(Device(0), 3);
  ASSERT_EQ(procs.size(), 3u);
  EXPECT_EQ(procs[2].pid, static_cast<unsigned>(second));
  EXPECT_EQ(procs[2].usedGpuMemory, 10 * kGiB - 1 * kGiB - (2 * kGiB + 256 * kMiB))
      << "granted only what the device has left";
  for (pid_t p : {plain, first, second}) Reap(p);
}

TEST_F(FakeSweep, BadExpressionsAndExpressionsOfFixedPidsFailInit) {
  for (const char* memory : {"\"1GiB + 48MiB*bs^9\"", "\"1GiB + * bs\"", "\"2GiB + 48MiB*bsx\"",
                             "\"1GiB + 4 parrots*bs\""}) {
    setenv(
        "GPUWATCH_FAKE_SCENARIO",
        Write("bad.yaml", std::string("devices:\n  - processes:\n      - {pid: child, memory: ") +
                              memory + "}\n")
            .c_str(),
        1);
    EXPECT_NE(NVML(nvmlInit_v2)(), NVML_SUCCESS) << memory;
  }
  setenv("GPUWATCH_FAKE_SCENARIO",
         Write("fixed.yaml", "devices:\n  - processes:\n      - {pid: 3, memory: \"48MiB*bs\"}\n")
             .c_str(),
         1);
  EXPECT_NE(NVML(nvmlInit_v2)(), NVML_SUCCESS) << "an expression needs pid: child";
}

}  // namespace
