// Warm answers: with `gpuwatch serve` running on the same GPUs, `gpuwatch`,
// `query` and `select` answer from its latest sample with the output of a
// cold run, without opening the driver (the test removes the library to
// prove it); --no-daemon reads the GPUs; a daemon on other GPUs, or none,
// leaves the command to read them itself.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "process_fixture.h"

namespace {
namespace fs = std::filesystem;
using gpuwatch::testing::Gpuwatch;
using gpuwatch_test::Slurp;

class WarmAnswer : public gpuwatch_test::ProcessTest {
 protected:
  // A daemon on the fake NVML (a copy of it, which the test may take away)
  // with `scenario`, answering in this test's runtime directory.
  void StartDaemon(const std::string& scenario) {
    fs::create_directories(dir_ / "lib");
    library_ = dir_ / "lib" / "libnvidia-ml.so.1";
    fs::copy_file(std::string(GPUWATCH_BINARY_DIR) + "/lib/libnvidia-ml-fake.so", library_,
                  fs::copy_options::overwrite_existing);
    Start({"serve", "--listen", "127.0.0.1:0", "-i", "200ms"}, Env(scenario));
    ASSERT_GT(Port(), 0) << Slurp(dir_ / "log");
    ASSERT_TRUE(WaitForLog("answer from this daemon's samples")) << Slurp(dir_ / "log");
  }
  // The daemon and the commands read this machine's /proc, where a scenario's
  // pid (5001) may be a live process, even one of this test's own commands,
  // alive for the cold answer and gone for the warm one. The scenario is
  // therefore run with its pids moved above PID_MAX_LIMIT (2^22), which no
  // process can hold.
  std::vector<std::string> Env(const std::string& scenario) const {
    const fs::path unheld = dir_ / fs::path(scenario).filename();
    if (!fs::exists(unheld)) {
      const std::string text = Slurp(fs::path(GPUWATCH_SOURCE_DIR) / scenario);
      const std::regex pid(R"(\bpid: (\d+))");
      std::string moved;
      auto from = text.cbegin();
      for (std::sregex_iterator m(text.begin(), text.end(), pid), end; m != end; ++m) {
        moved.append(from, (*m)[0].first);
        moved += "pid: " + std::to_string((1u << 22) + std::stoul((*m)[1]));
        from = (*m)[0].second;
      }
      moved.append(from, text.cend());
      std::ofstream(unheld) << moved;
    }
    return {"GPUWATCH_NVML_LIBRARY=" + library_.string(),
            "GPUWATCH_FAKE_SCENARIO=" + unheld.string()};
  }
  // What a command runs with: the same GPUs as the daemon, and its runtime directory.
  std::string Shell(const std::string& scenario) const {
    std::string env = "GPUWATCH_RUNTIME_DIR=" + (dir_ / "run").string();
    for (const auto& e : Env(scenario)) env += " " + e;
    return env;
  }
  fs::path library_;
};

// The status's first line carries the time it was printed.
std::string WithoutFirstLine(const std::string& text) { return text.substr(text.find('\n')); }

TEST_F(WarmAnswer, AnswersAreWhatAColdRunPrintsWithoutOpeningTheDriver) {
  StartDaemon("scenarios/test/fixed.yaml");
  const std::string env = Shell("scenarios/test/fixed.yaml");
  const std::string query =
      "query --query-gpu=index,name,uuid,memory.used,memory.total,fan.speed,power.draw,"
      "temperature.gpu,utilization.gpu,clocks.sm,pstate --format=csv";
  const auto cold_status = Gpuwatch("--no-daemon --color=never", env);
  const auto cold_json = Gpuwatch("--no-daemon --json", env);
  const auto cold_query = Gpuwatch("--no-daemon " + query, env);
  const auto cold_apps = Gpuwatch(
      "--no-daemon query --query-compute-apps=pid,process_name,used_memory --format=csv", env);
  const auto cold_select = Gpuwatch("--no-daemon select -n 2 --format=uuid", env);
  ASSERT_EQ(cold_status.code, 0) << cold_status.err;
  ASSERT_EQ(cold_query.code, 0) << cold_query.err;
  ASSERT_EQ(cold_select.code, 0) << cold_select.err;
  ASSERT_NE(cold_apps.out.find(std::to_string((1u << 22) + 5001) + ", "), std::string::npos)
      << cold_apps.out;

  fs::remove(library_);  // from here on, only the daemon can answer
  const auto no_daemon = Gpuwatch("--no-daemon --color=never", env);
  EXPECT_EQ(no_daemon.code, 1) << "--no-daemon reads the GPUs, and the library is gone";
  EXPECT_NE(no_daemon.err.find("libnvidia-ml.so.1"), std::string::npos) << no_daemon.err;

  const auto status = Gpuwatch("--color=never", env);
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_EQ(WithoutFirstLine(status.out), WithoutFirstLine(cold_status.out));
  const auto warm_json = Gpuwatch("--json", env);
  ASSERT_EQ(warm_json.code, 0) << warm_json.err;
  auto a = nlohmann::json::parse(warm_json.out);
  auto b = nlohmann::json::parse(cold_json.out);
  a.erase("time");  // the daemon's sample time, not the moment the command ran
  b.erase("time");
  EXPECT_EQ(a, b);
  const auto warm_query = Gpuwatch(query, env);
  ASSERT_EQ(warm_query.code, 0) << warm_query.err;
  EXPECT_EQ(warm_query.out, cold_query.out);
  const auto apps =
      Gpuwatch("query --query-compute-apps=pid,process_name,used_memory --format=csv", env);
  EXPECT_EQ(apps.out, cold_apps.out);
  const auto select = Gpuwatch("select -n 2 --format=uuid", env);
  ASSERT_EQ(select.code, 0) << select.err;
  EXPECT_EQ(select.out, cold_select.out);
  kill(pid_, SIGTERM);
  ASSERT_EQ(Exit(), 0) << Slurp(dir_ / "log");
  EXPECT_FALSE(fs::exists(dir_ / "run" / "daemon.sock")) << "the daemon takes its socket away";
  const auto after = Gpuwatch("--color=never", env);
  EXPECT_EQ(after.code, 1) << "no daemon: the command reads the GPUs itself (and fails here)";
}

TEST_F(WarmAnswer, ADaemonOnOtherGpusIsNotBelieved) {
  StartDaemon("scenarios/test/fixed.yaml");
  // The same library with another scenario: other GPUs, read here.
  const std::string env = Shell("scenarios/test/idle8.yaml");
  const auto warm = Gpuwatch("query --query-gpu=count --format=csv,noheader", env);
  const auto cold = Gpuwatch("--no-daemon query --query-gpu=count --format=csv,noheader", env);
  ASSERT_EQ(cold.code, 0) << cold.err;
  EXPECT_EQ(warm.out, cold.out);
  EXPECT_EQ(gpuwatch::testing::Lines(warm.out).front(), "8") << "idle8's GPUs, not fixed's two";
}

TEST_F(WarmAnswer, TheDemoFleetNeverAnswersForThisMachine) {
  Start({"serve", "--demo", "--listen", "127.0.0.1:0"});
  ASSERT_GT(Port(), 0) << Slurp(dir_ / "log");
  // Said once the fleet is open, after the daemon chose whether to answer.
  ASSERT_TRUE(WaitForLog("DEMO: simulated GPUs")) << Slurp(dir_ / "log");
  EXPECT_FALSE(fs::exists(dir_ / "run" / "daemon.sock"));
  EXPECT_EQ(Slurp(dir_ / "log").find("answer from this daemon"), std::string::npos);
}

}  // namespace
