// Tests of the fake NVML library itself, through its C ABI: the built .so is
// dlopen'ed and driven by the scenarios in scenarios/test/ (and small ones
// written here), with GPUWATCH_FAKE_TIME freezing scenario time.
#include "fake_nvml_fixture.h"

namespace {

TEST_F(FakeNvml, ExportsEverySymbolOfTheList) {
#define GPUWATCH_EXPECT_SYMBOL(name, ret, params) \
  EXPECT_NE(dlsym(Library(), #name), nullptr) << #name;
  GPUWATCH_NVML_SYMBOLS(GPUWATCH_EXPECT_SYMBOL)
#undef GPUWATCH_EXPECT_SYMBOL
  EXPECT_EQ(dlsym(Library(), "_ZN8gpuwatch9fake_nvml8FakeNvml8InstanceEv"), nullptr);
}

TEST_F(FakeNvml, CallsBeforeInitReturnUninitialized) {
  unsigned count = 0;
  EXPECT_EQ(NVML(nvmlDeviceGetCount_v2)(&count), NVML_ERROR_UNINITIALIZED);
  nvmlDevice_t device = nullptr;
  EXPECT_EQ(NVML(nvmlDeviceGetHandleByIndex_v2)(0, &device), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(NVML(nvmlShutdown)(), NVML_ERROR_UNINITIALIZED);
}

TEST_F(FakeNvml, InitIsReferenceCounted) {
  Start(Scenario("fixed.yaml"));
  ASSERT_EQ(NVML(nvmlInit)(), NVML_SUCCESS);
  unsigned count = 0;
  EXPECT_EQ(NVML(nvmlShutdown)(), NVML_SUCCESS);
  EXPECT_EQ(NVML(nvmlDeviceGetCount_v2)(&count), NVML_SUCCESS);
  EXPECT_EQ(NVML(nvmlShutdown)(), NVML_SUCCESS);
  EXPECT_EQ(NVML(nvmlDeviceGetCount_v2)(&count), NVML_ERROR_UNINITIALIZED);
}

TEST_F(FakeNvml, ScenarioIsReReadAfterShutdownAndInit) {
  Start(Scenario("fixed.yaml"));
  nvmlDevice_t second = Device(1);
  ASSERT_EQ(NVML(nvmlShutdown)(), NVML_SUCCESS);
  Start(Scenario("mig.yaml"));
  unsigned count = 0;
  ASSERT_EQ(NVML(nvmlDeviceGetCount_v2)(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(Name(Device(0)), "NVIDIA A100-SXM4-80GB");
  unsigned index = 0;
  EXPECT_EQ(NVML(nvmlDeviceGetIndex)(second, &index), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvml, TheInitClockRestartsForAnotherScenarioFileOnly) {
  // Utilization steps from 10 to 90 at t = 2 s of the init clock.
  const std::string text =
      "clock: init\n"
      "devices:\n"
      "  - name: NVIDIA H200\n"
      "    utilization_gpu: {steps: [[0, 10], [2, 90]]}\n";
  const std::string first = Write("clock_first.yaml", text);
  const std::string second = Write("clock_second.yaml", text);
  const auto live = [](const std::string& path) {
    setenv("GPUWATCH_FAKE_SCENARIO", path.c_str(), 1);
    unsetenv("GPUWATCH_FAKE_TIME");
    ASSERT_EQ(NVML(nvmlInit_v2)(), NVML_SUCCESS);
  };
  live(first);
  EXPECT_EQ(Utilization(Device(0)), 10u);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (Utilization(Device(0)) != 90u && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(Utilization(Device(0)), 90u);
  ASSERT_EQ(NVML(nvmlShutdown)(), NVML_SUCCESS);
  live(first);
  EXPECT_EQ(Utilization(Device(0)), 90u) << "a re-init of the same file keeps its timeline";
  ASSERT_EQ(NVML(nvmlShutdown)(), NVML_SUCCESS);
  live(second);
  EXPECT_EQ(Utilization(Device(0)), 10u) << "another file starts its own timeline at t = 0";
}

TEST_F(FakeNvml, ErrorStringsAreNvidias) {
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_SUCCESS), "Success");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_UNINITIALIZED), "Uninitialized");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_INVALID_ARGUMENT), "Invalid Argument");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_NOT_SUPPORTED), "Not Supported");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_NO_PERMISSION), "Insufficient Permissions");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_NOT_FOUND), "Not Found");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_INSUFFICIENT_SIZE), "Insufficient Size");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_DRIVER_NOT_LOADED), "Driver Not Loaded");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_LIBRARY_NOT_FOUND),
               "NVML Shared Library Not Found");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_FUNCTION_NOT_FOUND), "Function Not Found");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_LIB_RM_VERSION_MISMATCH),
               "RM has detected an NVML/RM version mismatch.");
  EXPECT_STREQ(NVML(nvmlErrorString)(kDeprecated), "Requested functionality has been deprecated");
  EXPECT_STREQ(NVML(nvmlErrorString)(NVML_ERROR_UNKNOWN), "Unknown Error");
}

TEST_F(FakeNvml, FixedScenarioReportsItsExactValues) {
  Start(Scenario("fixed.yaml"), 100);
  unsigned count = 0;
  ASSERT_EQ(NVML(nvmlDeviceGetCount_v2)(&count), NVML_SUCCESS);
  ASSERT_EQ(count, 2u);
  char text[96] = {};
  ASSERT_EQ(NVML(nvmlSystemGetDriverVersion)(text, sizeof text), NVML_SUCCESS);
  EXPECT_STREQ(text, "580.159.04");
  int cuda = 0;
  ASSERT_EQ(NVML(nvmlSystemGetCudaDriverVersion_v2)(&cuda), NVML_SUCCESS);
  EXPECT_EQ(cuda, 13000);

  nvmlDevice_t h200 = Device(0);
  EXPECT_EQ(Name(h200), "NVIDIA H200");
  ASSERT_EQ(NVML(nvmlDeviceGetUUID)(h200, text, sizeof text), NVML_SUCCESS);
  EXPECT_STREQ(text, "GPU-ba5eb01e-1a44-0730-738a-4f10e71191a1");
  nvmlPciInfo_t pci{};
  ASSERT_EQ(NVML(nvmlDeviceGetPciInfo_v3)(h200, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000000:18:00.0");
  EXPECT_EQ(pci.bus, 0x18u);
  EXPECT_EQ(pci.pciDeviceId, 0x233510DEu);

  nvmlMemory_v2_t memory{};
  memory.version = nvmlMemory_v2;
  ASSERT_EQ(NVML(nvmlDeviceGetMemoryInfo_v2)(h200, &memory), NVML_SUCCESS);
  EXPECT_EQ(memory.total, 143771 * kMiB);
  EXPECT_EQ(memory.reserved, 616 * kMiB);
  EXPECT_EQ(memory.used, 61952 * kMiB);  // processes + 512 MiB overhead
  EXPECT_EQ(memory.free, (143771 - 616 - 61952) * kMiB);

  EXPECT_EQ(Utilization(h200), 87u);
  unsigned value = 0;
  ASSERT_EQ(NVML(nvmlDeviceGetTemperature)(h200, NVML_TEMPERATURE_GPU, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 61u);
  ASSERT_EQ(NVML(nvmlDeviceGetPowerUsage)(h200, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 512500u);
  ASSERT_EQ(NVML(nvmlDeviceGetEnforcedPowerLimit)(h200, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 700000u);
  ASSERT_EQ(NVML(nvmlDeviceGetClockInfo)(h200, NVML_CLOCK_SM, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 1980u);
  unsigned long long energy = 0;
  ASSERT_EQ(NVML(nvmlDeviceGetTotalEnergyConsumption)(h200, &energy), NVML_SUCCESS);
  EXPECT_EQ(energy, 123456789ull);
  EXPECT_EQ(NVML(nvmlDeviceGetFanSpeed)(h200, &value), NVML_ERROR_NOT_SUPPORTED);
  int mode = -1;
  EXPECT_EQ(NVML(nvmlDeviceGetDisplayMode)(h200, &mode), kDeprecated);

  std::vector<nvmlProcessInfo_t> procs = Processes(h200);
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0].pid, 5001u);
  EXPECT_EQ(procs[0].usedGpuMemory, 40 * kGiB);
  EXPECT_EQ(procs[0].gpuInstanceId, NVML_INVALID_INSTANCE_ID);
  EXPECT_EQ(procs[1].pid, 5002u);

  nvmlFieldValue_t fields[3] = {};
  fields[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
  fields[1].fieldId = NVML_FI_DEV_POWER_AVERAGE;
  fields[2].fieldId = 1;  // not supported by the fake
  ASSERT_EQ(NVML(nvmlDeviceGetFieldValues)(h200, 3, fields), NVML_SUCCESS);
  EXPECT_EQ(fields[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(fields[0].value.uiVal, 66u);
  EXPECT_EQ(fields[1].value.uiVal, 505000u);
  EXPECT_EQ(fields[2].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);

  nvmlDevice_t l40s = Device(1);
  ASSERT_EQ(NVML(nvmlDeviceGetFanSpeed)(l40s, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 45u);
  ASSERT_EQ(NVML(nvmlDeviceGetFieldValues)(l40s, 1, fields), NVML_SUCCESS);
  EXPECT_EQ(fields[0].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);  // no HBM temperature
  unsigned long long reasons = 0;
  ASSERT_EQ(NVML(nvmlDeviceGetCurrentClocksEventReasons)(l40s, &reasons), NVML_SUCCESS);
  EXPECT_EQ(reasons, 0x4ull);
  procs = Processes(l40s);
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].pid, 5003u);
  EXPECT_EQ(procs[0].usedGpuMemory, 8 * kGiB);
}

TEST_F(FakeNvml, StringBuffersTooSmallReturnInsufficientSize) {
  Start(Scenario("fixed.yaml"));
  char name[5] = {};
  EXPECT_EQ(NVML(nvmlDeviceGetName)(Device(0), name, sizeof name), NVML_ERROR_INSUFFICIENT_SIZE);
}

TEST_F(FakeNvml, SeriesFollowRampSawtoothAndStepsAtFrozenTimes) {
  Start(Write("series.yaml", R"(
devices:
  - utilization_gpu: {ramp: {from: 10, per_min: 60, max: 50}}
  - utilization_gpu: {sawtooth: {low: 20, high: 80, period: 1m}}
  - utilization_gpu: {steps: [[0, 5], [30s, 40], [1m, 90]]}
  - utilization_gpu: {constant: 50, noise: 10}
)"));
  struct Case {
    double t;
    unsigned ramp, sawtooth, steps;
  };
  for (const Case& c : {Case{0, 10, 20, 5}, Case{15, 25, 35, 5}, Case{30, 40, 50, 40},
                        Case{45, 50, 65, 40}, Case{60, 50, 20, 90}, Case{600, 50, 20, 90}}) {
    At(c.t);
    EXPECT_EQ(Utilization(Device(0)), c.ramp) << "ramp at t=" << c.t;
    EXPECT_EQ(Utilization(Device(1)), c.sawtooth) << "sawtooth at t=" << c.t;
    EXPECT_EQ(Utilization(Device(2)), c.steps) << "steps at t=" << c.t;
  }
  std::vector<unsigned> noisy;
  for (double t : {1.0, 2.0, 3.0, 4.0, 5.0, 1.0}) {
    At(t);
    noisy.push_back(Utilization(Device(3)));
    EXPECT_GE(noisy.back(), 40u);
    EXPECT_LE(noisy.back(), 60u);
  }
  EXPECT_EQ(noisy.front(), noisy.back()) << "same t, same noise";
  EXPECT_NE(std::count(noisy.begin(), noisy.end(), noisy.front()), 6) << "noise never moved";
}

TEST_F(FakeNvml, ANoiseSeedGivesTheSameShapesOtherNoise) {
  const std::string path = Write("noise_seed.yaml", R"(devices:
  - utilization_gpu: {constant: 50, noise: 10}
  - utilization_gpu: {constant: 50, noise: 10, seed: 7}
  - utilization_gpu: {sawtooth: {low: 20, high: 80, period: 1m}}
)");
  // The values of the two noisy devices at t = 1..12 s.
  auto read = [&](const char* noise_seed) {
    if (noise_seed) {
      setenv("GPUWATCH_FAKE_NOISE_SEED", noise_seed, 1);
    } else {
      unsetenv("GPUWATCH_FAKE_NOISE_SEED");
    }
    Start(path);
    std::vector<unsigned> values;
    for (int t = 1; t <= 12; ++t) {
      At(t);
      for (unsigned d : {0u, 1u}) {
        values.push_back(Utilization(Device(d)));
        EXPECT_GE(values.back(), 40u);
        EXPECT_LE(values.back(), 60u);
      }
      EXPECT_EQ(Utilization(Device(2)), 20u + t) << "no noise, no change";
    }
    EXPECT_EQ(NVML(nvmlShutdown)(), NVML_SUCCESS);
    return values;
  };
  const auto own = read(nullptr);
  EXPECT_EQ(read("0"), own);
  const auto one = read("1");
  EXPECT_NE(one, own);
  EXPECT_EQ(read("1"), one);  // a seed is a seed: the same noise again
  EXPECT_NE(read("2"), one);

  setenv("GPUWATCH_FAKE_NOISE_SEED", "x1", 1);
  setenv("GPUWATCH_FAKE_SCENARIO", path.c_str(), 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(NVML(nvmlInit_v2)(), NVML_ERROR_UNKNOWN);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("GPUWATCH_FAKE_NOISE_SEED must be a number >= 0, not 'x1'"), std::string::npos)
      << err;
  unsetenv("GPUWATCH_FAKE_NOISE_SEED");
}

TEST_F(FakeNvml, SizesAndDurationsAcceptUnits) {
  Start(Write("units.yaml", R"(
devices:
  - memory_total: 1.5TiB
    memory_reserved: 0
    memory_used: {steps: [[0, 512MiB], [2h, 80GiB]]}
)"));
  nvmlMemory_v2_t memory{};
  memory.version = nvmlMemory_v2;
  At(7199);
  ASSERT_EQ(NVML(nvmlDeviceGetMemoryInfo_v2)(Device(0), &memory), NVML_SUCCESS);
  EXPECT_EQ(memory.total, 1536 * kGiB);
  EXPECT_EQ(memory.used, 512 * kMiB);
  At(7200);
  ASSERT_EQ(NVML(nvmlDeviceGetMemoryInfo_v2)(Device(0), &memory), NVML_SUCCESS);
  EXPECT_EQ(memory.used, 80 * kGiB);
}

TEST_F(FakeNvml, EnergyIntegratesPowerWhenNotGiven) {
  Start(Write("energy.yaml", "devices:\n  - power_draw: 100\n"), 10);
  unsigned long long energy = 0;
  ASSERT_EQ(NVML(nvmlDeviceGetTotalEnergyConsumption)(Device(0), &energy), NVML_SUCCESS);
  EXPECT_EQ(energy, 1000000ull);  // 100 W for 10 s, in mJ
  At(12.5);
  ASSERT_EQ(NVML(nvmlDeviceGetTotalEnergyConsumption)(Device(0), &energy), NVML_SUCCESS);
  EXPECT_EQ(energy, 1250000ull);
}

TEST_F(FakeNvml, ProcessesAreListedOnlyBetweenStartAndEnd) {
  Start(Write("window.yaml", R"(
devices:
  - processes:
      - {pid: 10, start: 5, end: 10, memory: {ramp: {from: 1GiB, per_s: 1GiB}}}
)"));
  At(4);
  EXPECT_TRUE(Processes(Device(0)).empty());
  At(7);
  std::vector<nvmlProcessInfo_t> procs = Processes(Device(0));
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].usedGpuMemory, 3 * kGiB);  // the ramp runs on the process's age
  At(10);
  EXPECT_TRUE(Processes(Device(0)).empty());
}

TEST_F(FakeNvml, ProcessListSetsNeededCountWhenBufferTooSmall) {
  Start(Scenario("fixed.yaml"));
  unsigned count = 0;
  EXPECT_EQ(NVML(nvmlDeviceGetComputeRunningProcesses_v3)(Device(0), &count, nullptr),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 2u);
  nvmlProcessInfo_t one[1] = {};
  count = 1;
  EXPECT_EQ(NVML(nvmlDeviceGetComputeRunningProcesses_v3)(Device(0), &count, one),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 2u);
  nvmlProcessInfo_v1_t v1[4] = {};
  count = 4;
  EXPECT_EQ(NVML(nvmlDeviceGetComputeRunningProcesses)(Device(0), &count, v1), NVML_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(v1[1].pid, 5002u);
  count = 0;
  EXPECT_EQ(NVML(nvmlDeviceGetGraphicsRunningProcesses_v3)(Device(0), &count, nullptr),
            NVML_SUCCESS);
  EXPECT_EQ(count, 0u);
}

TEST_F(FakeNvml, ProcessListRaceGrowsTheListBetweenQueryAndFetch) {
  Start(Scenario("race.yaml"));
  for (int sample = 0; sample < 2; ++sample) {
    unsigned count = 0;
    ASSERT_EQ(NVML(nvmlDeviceGetComputeRunningProcesses_v3)(Device(0), &count, nullptr),
              NVML_ERROR_INSUFFICIENT_SIZE);
    ASSERT_EQ(count, 2u);
    std::vector<nvmlProcessInfo_t> infos(count);
    EXPECT_EQ(NVML(nvmlDeviceGetComputeRunningProcesses_v3)(Device(0), &count, infos.data()),
              NVML_ERROR_INSUFFICIENT_SIZE);
    ASSERT_EQ(count, 4u);
    infos.resize(count);
    ASSERT_EQ(NVML(nvmlDeviceGetComputeRunningProcesses_v3)(Device(0), &count, infos.data()),
              NVML_SUCCESS);
    EXPECT_EQ(count, 4u);
    EXPECT_EQ(infos[2].pid, 99001u);
    EXPECT_EQ(infos[3].pid, 99002u);
  }
}

TEST_F(FakeNvml, ImplausibleValuesPassThroughUnclamped) {
  Start(Scenario("implausible.yaml"), 50);
  nvmlDevice_t device = Device(0);
  EXPECT_EQ(Utilization(device), 250u);
  nvmlMemory_v2_t memory{};
  memory.version = nvmlMemory_v2;
  ASSERT_EQ(NVML(nvmlDeviceGetMemoryInfo_v2)(device, &memory), NVML_SUCCESS);
  EXPECT_GT(memory.used, memory.total);
  EXPECT_EQ(memory.free, 0ull);
  nvmlProcessUtilizationSample_t samples[4] = {};
  unsigned count = 4;
  ASSERT_EQ(NVML(nvmlDeviceGetProcessUtilization)(device, samples, &count, 0), NVML_SUCCESS);
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(samples[0].pid, 7001u);
  EXPECT_EQ(samples[0].smUtil, 180u);
  EXPECT_EQ(samples[0].timeStamp - samples[1].timeStamp, 3600000000ull) << "stale: an hour old";
}

TEST_F(FakeNvml, ProcessUtilizationReturnsOnlySamplesNewerThanLastSeen) {
  Start(Scenario("implausible.yaml"), 50);
  nvmlDevice_t device = Device(0);
  unsigned count = 0;
  EXPECT_EQ(NVML(nvmlDeviceGetProcessUtilization)(device, nullptr, &count, 0),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 2u);
  nvmlProcessUtilizationSample_t samples[4] = {};
  count = 4;
  ASSERT_EQ(NVML(nvmlDeviceGetProcessUtilization)(device, samples, &count, 0), NVML_SUCCESS);
  const unsigned long long fresh = samples[0].timeStamp, stale = samples[1].timeStamp;
  count = 4;
  ASSERT_EQ(NVML(nvmlDeviceGetProcessUtilization)(device, samples, &count, stale), NVML_SUCCESS);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(samples[0].pid, 7001u);
  count = 4;
  EXPECT_EQ(NVML(nvmlDeviceGetProcessUtilization)(device, samples, &count, fresh),
            NVML_ERROR_NOT_FOUND);
  At(51);
  count = 4;
  ASSERT_EQ(NVML(nvmlDeviceGetProcessUtilization)(device, samples, &count, fresh), NVML_SUCCESS);
  EXPECT_EQ(samples[0].timeStamp, fresh + 1000000ull) << "timestamps follow frozen time";
}

TEST_F(FakeNvml, MigDevicesShowOnlyTheirInstance) {
  Start(Scenario("mig.yaml"));
  nvmlDevice_t parent = Device(0);
  nvmlUtilization_t u{};
  EXPECT_EQ(NVML(nvmlDeviceGetUtilizationRates)(parent, &u), NVML_ERROR_NOT_SUPPORTED);
  unsigned current = 0, pending = 0, max = 0;
  ASSERT_EQ(NVML(nvmlDeviceGetMigMode)(parent, &current, &pending), NVML_SUCCESS);
  EXPECT_EQ(current, 1u);
  ASSERT_EQ(NVML(nvmlDeviceGetMaxMigDeviceCount)(parent, &max), NVML_SUCCESS);
  EXPECT_EQ(max, 7u);
  std::vector<nvmlProcessInfo_t> all = Processes(parent);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].gpuInstanceId, 2u);
  EXPECT_EQ(all[1].computeInstanceId, 0u);

  nvmlDevice_t mig = nullptr;
  ASSERT_EQ(NVML(nvmlDeviceGetMigDeviceHandleByIndex)(parent, 1, &mig), NVML_SUCCESS);
  EXPECT_EQ(Name(mig), "NVIDIA A100-SXM4-80GB MIG 3g.40gb");
  unsigned gi = 0;
  ASSERT_EQ(NVML(nvmlDeviceGetGpuInstanceId)(mig, &gi), NVML_SUCCESS);
  EXPECT_EQ(gi, 2u);
  std::vector<nvmlProcessInfo_t> mine = Processes(mig);
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].pid, 8002u);
  nvmlMemory_v2_t memory{};
  memory.version = nvmlMemory_v2;
  ASSERT_EQ(NVML(nvmlDeviceGetMemoryInfo_v2)(mig, &memory), NVML_SUCCESS);
  EXPECT_EQ(memory.total, 40192 * kMiB);
  EXPECT_EQ(memory.used, 18 * kGiB);
  EXPECT_EQ(NVML(nvmlDeviceGetUtilizationRates)(mig, &u), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(NVML(nvmlDeviceGetMigDeviceHandleByIndex)(parent, 2, &mig), NVML_ERROR_NOT_FOUND);
}

TEST_F(FakeNvml, OldVariantHidesVersionedSymbolsButKeepsFallbacks) {
  void* old = dlopen(kOldLibrary, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(old, nullptr) << dlerror();
  for (const char* hidden :
       {"nvmlInit_v2", "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetProcessUtilization", "nvmlDeviceGetFieldValues"}) {
    EXPECT_EQ(dlsym(old, hidden), nullptr) << hidden;
  }
  for (const char* fallback :
       {"nvmlInit", "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetComputeRunningProcesses",
        "nvmlDeviceGetCurrentClocksThrottleReasons"}) {
    EXPECT_NE(dlsym(old, fallback), nullptr) << fallback;
  }
  dlclose(old);
}

}  // namespace
