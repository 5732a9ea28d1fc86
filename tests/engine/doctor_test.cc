// doctor's findings (engine/doctor.h): alike findings of several GPUs are one
// line, and without a driver the advice fits where gpuwatch runs.
#include "engine/doctor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gpuwatch::engine {
namespace {

namespace fs = std::filesystem;
using Level = Finding::Level;

DeviceSample Gpu(int index, const std::string& model) {
  DeviceSample d;
  d.index = index;
  const FieldRange r = RangeOf(Scope::kDevice);
  for (std::size_t i = r.first; i < r.first + r.count; ++i) {
    d.fields[static_cast<FieldId>(i)] = Reading::Number(1);
  }
  d.fields[FieldId::kName] = Reading::Text(model);
  d.fields[FieldId::kMigMode] = Reading::Number(0);
  return d;
}

std::string Joined(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) out += f.what + " | " + f.advice + "\n";
  return out;
}

TEST(Doctor, AlikeFindingsOfSeveralGpusAreOneLineNamingThemAll) {
  Snapshot s;
  for (int i = 0; i < 8; ++i) s.devices.push_back(Gpu(i, i < 6 ? "NVIDIA H200" : "NVIDIA L40S"));
  for (int i : {0, 1, 2, 3, 5, 6, 7}) {
    s.devices[i].fields[FieldId::kFanSpeedRatio] =
        Reading::Absent(Missing::kNotSupported, "nvmlDeviceGetFanSpeed: Not Supported");
  }
  s.devices[4].fields[FieldId::kPersistenceMode] = Reading::Number(0);
  const auto findings = CheckDevices(s);
  const std::string text = Joined(findings);
  EXPECT_NE(text.find("GPUs 0-3, 5 (NVIDIA H200): fan_speed_ratio: not_supported"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("GPUs 6, 7 (NVIDIA L40S): fan_speed_ratio: not_supported"), std::string::npos)
      << "another model is its own line:\n"
      << text;
  EXPECT_NE(text.find("GPU 4 (NVIDIA H200): persistence mode is off"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU 4 (NVIDIA H200): every field readable"), std::string::npos) << text;
  EXPECT_EQ(findings.size(), 4u) << text;
}

TEST(Doctor, ALostGpuIsAProblemOfItsOwn) {
  Snapshot s;
  s.devices = {Gpu(0, "NVIDIA H200"), Gpu(1, "NVIDIA H200")};
  s.devices[1].health = DeviceHealth::kLost;
  s.devices[1].health_detail = "GPU is lost";
  const auto findings = CheckDevices(s);
  ASSERT_EQ(findings.size(), 2u) << Joined(findings);
  EXPECT_EQ(findings[0].what, "GPU 0 (NVIDIA H200): every field readable");
  EXPECT_EQ(findings[1].level, Level::kProblem);
  EXPECT_EQ(findings[1].what, "GPU 1 (NVIDIA H200): lost: GPU is lost");
}

TEST(Doctor, WithoutADriverThePidNamespaceIsNotCalledFine) {
  host::Environment env;
  const std::string text = Joined(CheckEnvironment(env, "", /*have_driver=*/false));
  EXPECT_EQ(text.find("same PID namespace as the driver"), std::string::npos) << text;
  EXPECT_NE(text.find("not checked"), std::string::npos) << text;
  EXPECT_NE(Joined(CheckEnvironment(env, "")).find("same PID namespace as the driver"),
            std::string::npos);
}

class NoDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_ = fs::temp_directory_path() / ("doctor_test_dev_" + std::to_string(getpid()));
    fs::create_directories(dev_);
  }
  void TearDown() override { fs::remove_all(dev_); }
  fs::path dev_;
};

TEST_F(NoDriver, AContainerWithoutGpusIsToldOfTheToolkitAndGpusAll) {
  host::Environment env;
  env.in_container = true;
  env.container_runtime = "docker";
  const auto findings = CheckNoDriver(env, dev_, "");
  const std::string text = Joined(findings);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].level, Level::kProblem) << text;
  for (const char* want : {"/nvidia*", "NVIDIA Container Toolkit", "--gpus all",
                           "GPUWATCH_NVML_LIBRARY=/path/to/libnvidia-ml.so.1"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
}

TEST_F(NoDriver, OnTheHostItIsTheDriverAndTheNodesThatAreThereAreNamed) {
  host::Environment env;
  std::string text = Joined(CheckNoDriver(env, dev_, ""));
  EXPECT_NE(text.find("kernel driver is not loaded"), std::string::npos) << text;
  EXPECT_EQ(text.find("Container Toolkit"), std::string::npos) << text;
  std::ofstream(dev_ / "nvidia0") << "";
  std::ofstream(dev_ / "nvidiactl") << "";
  const auto findings = CheckNoDriver(env, dev_, "/opt/lib/libnvidia-ml.so.1");
  text = Joined(findings);
  EXPECT_EQ(findings[0].level, Level::kInfo) << text;
  EXPECT_NE(
      text.find("present: " + (dev_ / "nvidia0").string() + ", " + (dev_ / "nvidiactl").string()),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("GPUWATCH_NVML_LIBRARY=/opt/lib/libnvidia-ml.so.1 was tried"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace gpuwatch::engine
