// The fake library's faults, through its C ABI: lost GPUs, not-supported
// and error answers, init errors, bad scenario files, and calls that hang.
#include <sys/stat.h>

#include "fake_nvml_fixture.h"

namespace {

TEST_F(FakeNvml, LostDeviceReturnsGpuIsLostInsideWindow) {
  Start(Scenario("lost.yaml"), 9.9);
  EXPECT_EQ(Utilization(Device(1)), 60u);
  for (double t : {10.0, 15.0, 19.9}) {
    At(t);
    nvmlDevice_t device = nullptr;
    EXPECT_EQ(NVML(nvmlDeviceGetHandleByIndex_v2)(1, &device), NVML_SUCCESS) << "t=" << t;
    nvmlUtilization_t u{};
    EXPECT_EQ(NVML(nvmlDeviceGetUtilizationRates)(device, &u), NVML_ERROR_GPU_IS_LOST);
    char name[96];
    EXPECT_EQ(NVML(nvmlDeviceGetName)(device, name, sizeof name), NVML_ERROR_GPU_IS_LOST);
    EXPECT_EQ(Utilization(Device(0)), 50u) << "other GPUs keep working";
  }
  At(20);
  EXPECT_EQ(Utilization(Device(1)), 60u);
}

TEST_F(FakeNvml, NotSupportedAndErrorFaultsReplaceTheAnswer) {
  Start(Scenario("unsupported.yaml"));
  nvmlDevice_t device = Device(0);
  unsigned value = 0;
  EXPECT_EQ(NVML(nvmlDeviceGetFanSpeed)(device, &value), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(NVML(nvmlDeviceGetTemperature)(device, NVML_TEMPERATURE_GPU, &value),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(NVML(nvmlDeviceGetClockInfo)(device, NVML_CLOCK_SM, &value), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(NVML(nvmlDeviceGetPowerUsage)(device, &value), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(Utilization(device), 10u);
}

TEST_F(FakeNvml, InitErrorFromScenarioFailsInit) {
  setenv("GPUWATCH_FAKE_SCENARIO", Scenario("init_driver_not_loaded.yaml").c_str(), 1);
  EXPECT_EQ(NVML(nvmlInit_v2)(), NVML_ERROR_DRIVER_NOT_LOADED);
  unsigned count = 0;
  EXPECT_EQ(NVML(nvmlDeviceGetCount_v2)(&count), NVML_ERROR_UNINITIALIZED);
  setenv("GPUWATCH_FAKE_SCENARIO", Scenario("init_version_mismatch.yaml").c_str(), 1);
  EXPECT_EQ(NVML(nvmlInit)(), NVML_ERROR_LIB_RM_VERSION_MISMATCH);
}

TEST_F(FakeNvml, BadScenarioFailsInitNamingFileLineAndColumn) {
  const std::string path = Write("bad.yaml", R"(devices:
  - name: NVIDIA H200
    utilization_gpu: 5
    temprature: 40
)");
  setenv("GPUWATCH_FAKE_SCENARIO", path.c_str(), 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(NVML(nvmlInit_v2)(), NVML_ERROR_UNKNOWN);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(path + ":4:5: unknown key 'temprature' in device 0"), std::string::npos)
      << err;
}

TEST_F(FakeNvml, BadUnitFailsInitWithItsPosition) {
  const std::string path = Write("bad_unit.yaml", "devices:\n  - memory_total: 80GiBs\n");
  setenv("GPUWATCH_FAKE_SCENARIO", path.c_str(), 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(NVML(nvmlInit_v2)(), NVML_ERROR_UNKNOWN);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(path + ":2:19: '80GiBs' is not a size"), std::string::npos) << err;
}

TEST_F(FakeNvml, TimeScaleOfZeroOrLessFailsInitWithItsPosition) {
  for (const std::string scale : {"0", "-2", "0.0"}) {
    const std::string path = Write("bad_scale.yaml", "clock: init\ntime_scale: " + scale + "\n");
    setenv("GPUWATCH_FAKE_SCENARIO", path.c_str(), 1);
    testing::internal::CaptureStderr();
    EXPECT_EQ(NVML(nvmlInit_v2)(), NVML_ERROR_UNKNOWN) << scale;
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find(path +
                       ":2:13: time_scale must be > 0 (scenario seconds per real second), "
                       "not " +
                       scale),
              std::string::npos)
        << err;
  }
}

TEST_F(FakeNvml, ScenarioThatIsNotARegularFileFailsInitWithoutReadingIt) {
  const std::string fifo = testing::TempDir() + "/" + std::to_string(getpid()) + "-scenario.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), testing::TempDir()}) {
    setenv("GPUWATCH_FAKE_SCENARIO", path.c_str(), 1);
    testing::internal::CaptureStderr();
    EXPECT_EQ(NVML(nvmlInit_v2)(), NVML_ERROR_UNKNOWN) << path;  // at once, not blocked
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("fake NVML: scenario file " + path + " is a"), std::string::npos) << err;
    EXPECT_NE(err.find(", not a regular file"), std::string::npos) << err;
  }
  unlink(fifo.c_str());
}

TEST_F(FakeNvml, HangBlocksOnlyTheHangingCall) {
  Start(Write("short_hang.yaml", R"(
devices: [{power_draw: 300}, {power_draw: 310}]
faults:
  - {hang: {call: nvmlDeviceGetPowerUsage, ms: 600}, device: 0, from: 5}
)"),
        6);
  nvmlDevice_t hanging = Device(0), healthy = Device(1);
  const auto start = std::chrono::steady_clock::now();
  std::thread blocked([hanging] {
    unsigned mw = 0;
    EXPECT_EQ(NVML(nvmlDeviceGetPowerUsage)(hanging, &mw), NVML_SUCCESS);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  unsigned mw = 0;
  ASSERT_EQ(NVML(nvmlDeviceGetPowerUsage)(healthy, &mw), NVML_SUCCESS);
  EXPECT_EQ(mw, 310000u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(400));
  blocked.join();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(550));
}

TEST_F(FakeNvml, HangScenarioAnswersBeforeItsWindow) {
  Start(Scenario("hang.yaml"), 4);
  unsigned mw = 0;
  ASSERT_EQ(NVML(nvmlDeviceGetPowerUsage)(Device(0), &mw), NVML_SUCCESS);
  EXPECT_EQ(mw, 300000u);
}

}  // namespace
