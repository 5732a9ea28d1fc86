// `gpuwatch select` end to end on the demo fleet at a frozen time: the
// choice, its formats, CUDA_VISIBLE_DEVICES, the per-GPU reasons when too few
// qualify, and every option's bad values.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "cli_util.h"

namespace {
using gpuwatch::testing::CmdResult;
using gpuwatch::testing::Gpuwatch;

TEST(CliSelect, PrintsTheChoiceInEachFormat) {
  const CmdResult one = Gpuwatch("--demo select");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_TRUE(std::regex_match(one.out, std::regex("[0-7]\n"))) << one.out;
  const CmdResult env = Gpuwatch("--demo select -n 2 --format env --order index");
  ASSERT_EQ(env.code, 0) << env.err;
  EXPECT_EQ(env.out, "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0,1\n");
  const CmdResult uuid = Gpuwatch("--demo select --format uuid --order index");
  ASSERT_EQ(uuid.code, 0) << uuid.err;
  EXPECT_EQ(uuid.out.rfind("GPU-", 0), 0u) << uuid.out;
}

TEST(CliSelect, TooFewQualifyExits1AndSaysWhyForEachGpu) {
  const CmdResult r = Gpuwatch("--demo select -n 8 --max-util 30%");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "") << "nothing to eval";
  EXPECT_NE(r.err.find("8 GPUs with utilization ≤ 30 % asked, 2 qualify:"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("GPU 0: utilization 95 % > 30 %"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPU 4: qualifies"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPU 5: MIG mode on: its MIG devices (5:0, 5:1) are offered"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("GPU 5:1: utilization unknown"), std::string::npos)
      << "MIG devices report no utilization: " << r.err;
}

TEST(CliSelect, HonoursCudaVisibleDevices) {
  const CmdResult r = Gpuwatch("--demo select -n 2 --order index",
                               "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=3,6");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "3,6\n");
  const CmdResult mixed = Gpuwatch("--demo select", "CUDA_VISIBLE_DEVICES=3");
  EXPECT_EQ(mixed.code, 2) << "the demo mixes models: ordinals are ambiguous without PCI_BUS_ID";
  EXPECT_NE(mixed.err.find("Set CUDA_DEVICE_ORDER=PCI_BUS_ID or list UUIDs"), std::string::npos)
      << mixed.err;
}

TEST(CliSelect, MigDevicesAreChosenAndGivenByUuid) {
  const CmdResult r = Gpuwatch("--demo select --format index", "CUDA_VISIBLE_DEVICES=MIG-e8d3a6f1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "MIG-e8d3a6f1-7c04-5b29-9f5e-1a6b0d4c8e72\n")
      << "a MIG device has no index CUDA takes";
  const CmdResult env = Gpuwatch("--demo select --format env", "CUDA_VISIBLE_DEVICES=5");
  EXPECT_EQ(env.code, 2) << "ordinals on the mixed demo fleet need PCI_BUS_ID";
  const CmdResult both =
      Gpuwatch("--demo select -n 2", "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=5");
  EXPECT_EQ(both.code, 1);
  EXPECT_NE(both.err.find("GPU 5:0: a MIG device is only given alone"), std::string::npos)
      << both.err;
}

TEST(CliSelect, MinFreeZeroNeedsNoUnit) {
  const CmdResult r = Gpuwatch("--demo select --min-free 0 --order index");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
}

TEST(CliSelect, BadValuesAreUsageErrorsNamingTheOption) {
  const std::pair<std::string, std::string> cases[] = {
      {"--count 0", "--count 0: expected 1 to 4096"},
      {"--wait soon", "--wait: "},
      {"--lease --lease-owner 4000000000", "--lease-owner 4000000000: no process"},
      {"--lease-owner 1", "--lease-owner needs --lease, --wait or --release"},
      {"--min-free 5parsecs", "--min-free:"},
      {"--min-free 40",
       "--min-free: \"40\" has no unit: write e.g. 40GiB or 40MiB (40B if you mean "
       "bytes)"},
      {"--max-util 130", "--max-util \"130\": expected a percentage from 0 to 100"},
      {"--max-memory-util lots", "--max-memory-util \"lots\": expected a percentage"},
      {"--exclude 1,x", "--exclude \"1,x\": \"x\" is not a GPU index"},
      {"--order fastest", "--order \"fastest\": must be load, memory, index or random"},
      {"--format json", "--format \"json\": must be index, uuid or env"},
  };
  for (const auto& [args, why] : cases) {
    const CmdResult r = Gpuwatch("--demo select " + args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_NE(r.err.find(why), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
}

// A one-shot select reads what choosing needs (memory, utilization, MIG mode,
// names), not a whole sample: every other call hangs for 60 s here and the
// choice still comes; the process list only for --account-as-free.
TEST(CliSelect, ReadsOnlyWhatChoosingNeeds) {
  namespace fs = std::filesystem;
  const fs::path scenario =
      fs::temp_directory_path() / ("gw-select-reads-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(scenario)
      << "devices:\n  - {name: NVIDIA H200}\n  - {name: NVIDIA L40S}\nfaults:\n"
         "  - hang: {call: nvmlDeviceGetPowerUsage, ms: 60000}\n"
         "  - hang: {call: nvmlDeviceGetTemperature, ms: 60000}\n"
         "  - hang: {call: nvmlDeviceGetPcieThroughput, ms: 60000}\n"
         "  - hang: {call: nvmlDeviceGetClockInfo, ms: 60000}\n"
         "  - hang: {call: nvmlDeviceGetComputeRunningProcesses_v3, ms: 60000}\n";
  const std::string select = "--no-daemon select --scenario " + scenario.string();
  const CmdResult r =
      gpuwatch::testing::RunBinary("timeout 30 " + std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch",
                                   select + " -n 2 --order index --min-free 1GiB");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0,1\n");
  // Memory of the user's own processes counts as free: the list is read.
  const CmdResult listed =
      gpuwatch::testing::RunBinary("timeout 3 " + std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch",
                                   select + " --account-as-free nobody");
  EXPECT_EQ(listed.code, 124) << listed.out << listed.err;
  fs::remove(scenario);
}

}  // namespace
