// A driver that stops answering, at its first calls (discovery) or in the
// middle of a read: every command still ends on SIGINT / SIGTERM (or its
// --duration), says which call hangs, and the daemon serves the last values
// marked stale, not as live (fake NVML `hang` faults; docs/RELIABILITY.md).
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "process_fixture.h"

namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using gpuwatch_test::Slurp;

class Hang : public gpuwatch_test::ProcessTest {
 protected:
  // A scenario whose device discovery never returns.
  std::string DiscoveryHangs() {
    const fs::path p = dir_ / "discovery_hangs.yaml";
    std::ofstream(p) << "devices:\n  - {name: NVIDIA H200}\nfaults:\n"
                        "  - hang: {call: nvmlDeviceGetCount_v2}\n";
    return "GPUWATCH_FAKE_SCENARIO=" + p.string();
  }
  std::string Fake() const {
    return std::string("GPUWATCH_NVML_LIBRARY=") + GPUWATCH_BINARY_DIR +
           "/lib/libnvidia-ml-fake.so";
  }
  // scenarios/test/hang.yaml: GPU 0's power read blocks from t=5 s.
  std::string ReadHangs() const {
    return std::string("GPUWATCH_FAKE_SCENARIO=") + GPUWATCH_SOURCE_DIR +
           "/scenarios/test/hang.yaml";
  }
};

TEST_F(Hang, WatchEndsAtItsDurationWhenDiscoveryNeverReturns) {
  Start({"watch", "--duration", "2s"}, {Fake(), DiscoveryHangs()});
  EXPECT_EQ(Exit(), 1) << Slurp(dir_ / "log");
  EXPECT_NE(Slurp(dir_ / "log")
                .find("the driver did not answer in time: NVML initialisation "
                      "(nvmlInit, device discovery) has not returned for 2 s"),
            std::string::npos)
      << Slurp(dir_ / "log");
}

TEST_F(Hang, SigintEndsWatchWhileDiscoveryHangs) {
  Start({"watch"}, {Fake(), DiscoveryHangs()});
  std::this_thread::sleep_for(1s);
  kill(pid_, SIGINT);
  EXPECT_EQ(Exit(), 130) << Slurp(dir_ / "log");
  EXPECT_NE(Slurp(dir_ / "log")
                .find("interrupted while waiting for the driver: NVML "
                      "initialisation"),
            std::string::npos)
      << Slurp(dir_ / "log");
}

TEST_F(Hang, SigintEndsAQueryLoopStuckInARead) {
  Start({"query", "--query-gpu=index,power.draw", "--format=csv", "-l", "1"},
        {Fake(), ReadHangs()});
  // Rows come until t=5 s, then the read of GPU 0 blocks.
  ASSERT_TRUE(WaitForLog("0, 300.00 W")) << Slurp(dir_ / "log");
  std::this_thread::sleep_for(6s);
  kill(pid_, SIGINT);
  // The read never returns: the exit guard's alarm ends the command 3 s later.
  EXPECT_EQ(Exit(), 130) << Slurp(dir_ / "log");
  EXPECT_TRUE(std::regex_search(
      Slurp(dir_ / "log"),
      std::regex("gpuwatch: reading GPU 0 has not returned for [0-9]+ s \\(a hung driver\\?\\): "
                 "exiting without waiting for it\n")))
      << Slurp(dir_ / "log");
}

TEST_F(Hang, AOneShotStatusSaysWhichCallHangs) {
  Start({}, {Fake(), ReadHangs(), "GPUWATCH_FAKE_TIME=10"});  // `gpuwatch`: the status screen
  ASSERT_TRUE(
      WaitForLog("gpuwatch: warning: reading GPU 0 has not returned for 10 s (a hung "
                 "driver?); still waiting, Ctrl-C to stop"))
      << Slurp(dir_ / "log");
  kill(pid_, SIGINT);  // no handler: the default action ends it at once
  EXPECT_EQ(Exit(), -1) << Slurp(dir_ / "log");
}

TEST_F(Hang, ServeSaysDiscoveryHangsAndStillStopsOnSigterm) {
  Start({"serve", "--listen", "127.0.0.1:0", "--hostname", "node1"}, {Fake(), DiscoveryHangs()});
  const int port = Port();
  ASSERT_GT(port, 0) << Slurp(dir_ / "log");
  ASSERT_TRUE(WaitForLog("the driver is not answering: NVML initialisation"))
      << Slurp(dir_ / "log");
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  auto ready = c.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_NE(ready->body.find("has not returned"), std::string::npos) << ready->body;
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("gpuwatch_exporter_sampler_hung{hostname=\"node1\"} 1"),
            std::string::npos)
      << metrics->body;
  kill(pid_, SIGTERM);
  EXPECT_EQ(Exit(), 0) << Slurp(dir_ / "log");
}

TEST_F(Hang, ServeKeepsReadingTheGpuThatAnswersWhileAnotherHangs) {
  Start({"serve", "--listen", "127.0.0.1:0", "--hostname", "node1"}, {Fake(), ReadHangs()});
  const int port = Port();
  ASSERT_GT(port, 0) << Slurp(dir_ / "log");
  ASSERT_TRUE(WaitForLog("GPU 0 is not answering (reading GPU 0 has not returned for"))
      << Slurp(dir_ / "log");
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  const auto before = nlohmann::json::parse(c.Get("/api/v1/snapshot")->body);
  std::this_thread::sleep_for(2500ms);
  const auto after = nlohmann::json::parse(c.Get("/api/v1/snapshot")->body);
  EXPECT_FALSE(after["stale"].get<bool>()) << "GPU 1 is read: the snapshot is live";
  EXPECT_GE(after["sequence"].get<int>(), before["sequence"].get<int>() + 1)
      << "samples go on while GPU 0 hangs";
  const auto devices = nlohmann::json::parse(c.Get("/api/v1/devices")->body)["devices"];
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0]["health"], "stale") << devices[0].dump();
  EXPECT_EQ(devices[1]["health"], "ok") << devices[1].dump();
  const std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("gpuwatch_exporter_sampler_hung{hostname=\"node1\"} 0"), std::string::npos)
      << metrics;
  EXPECT_TRUE(std::regex_search(metrics, std::regex("gpuwatch_gpu_up\\{gpu=\"0\"[^}]*\\} 0\n")))
      << "GPU 0's frozen values are not exported as live\n"
      << metrics;
  EXPECT_TRUE(std::regex_search(metrics, std::regex("gpuwatch_gpu_up\\{gpu=\"1\"[^}]*\\} 1\n")))
      << metrics;
  EXPECT_TRUE(
      std::regex_search(metrics, std::regex("gpuwatch_power_watts\\{gpu=\"1\"[^}]*\\} 310\n")))
      << metrics;
  EXPECT_FALSE(std::regex_search(metrics, std::regex("gpuwatch_power_watts\\{gpu=\"0\"")))
      << metrics;
  auto ready = c.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200) << "one GPU of two still answers: " << ready->body;
  const std::string log = Slurp(dir_ / "log");
  EXPECT_EQ(log.find("GPU 0 is not answering"), log.rfind("GPU 0 is not answering"))
      << "logged once: " << log;
  EXPECT_EQ(log.find("GPU 1 is not answering"), std::string::npos) << log;
  kill(pid_, SIGTERM);
  EXPECT_EQ(Exit(), 0) << Slurp(dir_ / "log");
}

TEST_F(Hang, ServeMarksEverythingStaleWhenTheOnlyGpuHangs) {
  const fs::path p = dir_ / "one_gpu_hangs.yaml";
  std::ofstream(p) << "devices:\n  - {name: NVIDIA H200, power_draw: 300}\nfaults:\n"
                      "  - hang: {call: nvmlDeviceGetPowerUsage}\n    from: 5\n";
  Start({"serve", "--listen", "127.0.0.1:0", "--hostname", "node1"},
        {Fake(), "GPUWATCH_FAKE_SCENARIO=" + p.string()});
  const int port = Port();
  ASSERT_GT(port, 0) << Slurp(dir_ / "log");
  ASSERT_TRUE(WaitForLog("the driver is not answering (reading GPU 0 has not returned for"))
      << Slurp(dir_ / "log");
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  const std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("gpuwatch_exporter_sampler_hung{hostname=\"node1\"} 1"), std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("gpuwatch_power_watts{"), std::string::npos) << metrics;
  EXPECT_TRUE(nlohmann::json::parse(c.Get("/api/v1/snapshot")->body)["stale"].get<bool>());
  EXPECT_EQ(c.Get("/readyz")->status, 503);
  std::this_thread::sleep_for(2s);
  const std::string log = Slurp(dir_ / "log");
  EXPECT_EQ(log.find("the driver is not answering ("), log.rfind("the driver is not answering ("))
      << "logged once: " << log;
  kill(pid_, SIGTERM);
  EXPECT_EQ(Exit(), 0) << Slurp(dir_ / "log");
}

}  // namespace
