// `gpuwatch doctor` end to end against the fake NVML: the way in when there is
// no driver (never itself), a finding of several GPUs said once, a healthy
// fleet, and an init failure named with exit status 1.
#include <gtest/gtest.h>

#include <string>

#include "cli_util.h"

namespace {
using gpuwatch::testing::CmdResult;
using gpuwatch::testing::Gpuwatch;
using gpuwatch::testing::kFixed;

TEST(Cli, DoctorWithoutADriverSaysTheWayInNotItself) {
  const CmdResult r =
      Gpuwatch("doctor --color=never", "GPUWATCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[FAIL] cannot use NVML: NVML library not found"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("gpuwatch doctor"), std::string::npos) << "doctor is running:\n" << r.out;
  EXPECT_EQ(r.out.find("same PID namespace as the driver"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/dev/nvidia"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPUWATCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 was tried"),
            std::string::npos)
      << r.out;
}

TEST(Cli, DoctorSaysAFindingOfSeveralGpusOnce) {
  const CmdResult r = Gpuwatch("doctor --demo --color=never");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("GPUs 0-3 (NVIDIA H200): fan_speed_ratio: not_supported"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("GPU 1 (NVIDIA H200)"), std::string::npos) << r.out;
}

TEST(Cli, DoctorIsHealthyOnTheFixedScenario) {
  const CmdResult r = Gpuwatch("doctor " + kFixed);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("DEMO"), std::string::npos);
  EXPECT_NE(r.out.find("2 GPU(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fan_speed_ratio: not_supported"), std::string::npos) << r.out;
}

TEST(Cli, DoctorNamesTheInitFailureAndExits1) {
  const CmdResult r =
      Gpuwatch("doctor --scenario scenarios/test/init_driver_not_loaded.yaml --color=never");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("NVIDIA driver not loaded"), std::string::npos) << r.out;
  const CmdResult mismatch =
      Gpuwatch("doctor --scenario scenarios/test/init_version_mismatch.yaml --color=never");
  EXPECT_EQ(mismatch.code, 1);
  EXPECT_NE(mismatch.out.find("driver/library version mismatch"), std::string::npos)
      << mismatch.out;
}

}  // namespace
