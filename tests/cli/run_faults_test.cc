// `gpuwatch run` when something fails: a full disk, a driver that never
// answers or is not loaded, no NVML library, --require-gpu, bad flags. The job
// runs unmonitored with one warning, or does not start at all.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_util.h"
#include "run_fixture.h"

namespace {
namespace fs = std::filesystem;
using gpuwatch::run_test::RunFixture;
using gpuwatch::testing::Slurp;

TEST_F(RunFixture, DiskFullWarnsOnceAndTheJobGoesOn) {
  const Out r = Run("--csv /dev/full", Job("exec sleep 1"));
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string warning = "writing /dev/full failed (No space left on device)";
  const auto first = r.err.find(warning);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(warning, first + 1), std::string::npos) << "one warning, not one per sample";
  EXPECT_NE(r.err.find("gpuwatch run summary"), std::string::npos);
}

TEST_F(RunFixture, ADriverThatNeverAnswersDoesNotHoldTheJobBack) {
  // Device discovery blocks for good: after 10 s the job runs unmonitored.
  std::ofstream(dir_ / "job.yaml", std::ios::trunc)
      << "devices:\n  - {name: NVIDIA H200}\nfaults:\n  - hang: {call: nvmlDeviceGetCount_v2}\n";
  const Out r = Run("--gpus 0", "sh -c 'exit 4'");
  EXPECT_EQ(r.code, 4) << "the job's status: " << r.err;
  EXPECT_NE(r.err.find("the job runs without GPU monitoring"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the driver did not answer in time: NVML initialisation (nvmlInit, device "
                       "discovery) has not returned for 10 s"),
            std::string::npos)
      << r.err;
}

TEST_F(RunFixture, WithoutADriverTheJobRunsUnmonitoredAfterOneWarning) {
  std::ofstream(dir_ / "job.yaml", std::ios::trunc) << "init_error: DRIVER_NOT_LOADED\n";
  const Out r =
      Run("--gpus 1 --json " + (dir_ / "report.json").string(),
          "sh -c 'echo \"$CUDA_VISIBLE_DEVICES\" > " + (dir_ / "env").string() + "; exit 3'");
  EXPECT_EQ(r.code, 3) << "the job's status: " << r.err;
  EXPECT_EQ(Slurp(dir_ / "env"), "1\n") << "the GPUs it was given";
  const std::string warning =
      "gpuwatch run: warning: the job runs without GPU monitoring (no GPU samples, alerts, leak "
      "checks or --memory-limit): NVIDIA driver not loaded: nvmlInit_v2 returned";
  EXPECT_EQ(r.err.rfind(warning, 0), 0u) << r.err;
  EXPECT_NE(r.err.find("add --require-gpu to refuse to start instead.\n"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("warning", warning.size()), std::string::npos) << "one warning\n" << r.err;
  EXPECT_NE(r.err.find("GPUs         not monitored: NVIDIA driver not loaded"), std::string::npos)
      << "the summary does not claim the job used no GPU\n"
      << r.err;
  const auto j = Report();
  EXPECT_EQ(j["exit_status"], 3);
  EXPECT_TRUE(j["gpus"].empty());
  EXPECT_EQ(j["unmonitored"].get<std::string>().rfind("NVIDIA driver not loaded: ", 0), 0u) << j;
  EXPECT_EQ(j["leak_verdict"], "not checked: the GPUs were not monitored");
  // --quiet does not hide it: the job is not being watched.
  const Out quiet = Run("--quiet", "true");
  EXPECT_EQ(quiet.code, 0);
  EXPECT_EQ(quiet.err.rfind(warning, 0), 0u) << quiet.err;
}

TEST_F(RunFixture, WithoutALibraryTheJobRunsToo) {
  const gpuwatch::testing::CmdResult r = gpuwatch::testing::Gpuwatch(
      "run -q -- sh -c 'exit 4'", "GPUWATCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("runs without GPU monitoring (no GPU samples, alerts, leak checks or "
                       "--memory-limit): NVML library not found (is the NVIDIA driver "
                       "installed?); tried: /nonexistent/libnvidia-ml.so.1: "),
            std::string::npos)
      << r.err;
}

TEST_F(RunFixture, RequireGpuRefusesToStartWithoutADriver) {
  std::ofstream(dir_ / "job.yaml", std::ios::trunc) << "init_error: DRIVER_NOT_LOADED\n";
  const Out r = Run("--require-gpu", "touch " + (dir_ / "started").string());
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("NVIDIA driver not loaded"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "started"));
  // Choosing and leasing GPUs needs the driver too.
  const Out claim = Run("--gpus auto:1", "touch " + (dir_ / "started").string());
  EXPECT_EQ(claim.code, 1) << claim.err;
  EXPECT_NE(claim.err.find("--gpus auto:1 chooses and leases GPUs through the driver"),
            std::string::npos)
      << claim.err;
  EXPECT_FALSE(fs::exists(dir_ / "started"));
}

TEST_F(RunFixture, BadInputFailsBeforeTheJobStarts) {
  const std::string touch = "touch " + (dir_ / "started").string();
  const std::pair<std::string, std::string> cases[] = {
      {"--memory-limit 5parsecs", "\"5parsecs\" is not a size"},
      {"--memory-limit 40", "--memory-limit: \"40\" has no unit: write e.g. 40GiB"},  // 40 B?
      {"--rules " + dir_.string(), "--rules: " + dir_.string() + " is a directory"},
      {"--grace soon", "\"soon\" is not a duration"},
      {"--json /nonexistent-dir/r.json", "cannot write /nonexistent-dir/r.json"},
      {"--csv /nonexistent-dir/r.csv", "--csv: cannot write /nonexistent-dir/r.csv"},
      {"--gpus 9", "there is no GPU 9"},
      {"--rules " + (dir_ / "missing.yaml").string(), "missing.yaml"},
      {"--report /nonexistent-dir/r.html", "--report: cannot write /nonexistent-dir/r.html"},
      {"--leak-window 500ms", "--leak-window: 500ms is outside 1s .. 1h"},
      {"--leak-window soon", "--leak-window: \"soon\" is not a duration"},
  };
  for (const auto& [options, why] : cases) {
    const Out r = Run(options, touch);
    EXPECT_EQ(r.code, 2) << options << ": " << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << options << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "started")) << options << ": the job must not start";
  }
  EXPECT_EQ(Run("", "").code, 2) << "no command";
}

}  // namespace
