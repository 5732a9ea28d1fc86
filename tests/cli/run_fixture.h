// The fixture of the `gpuwatch run` tests: a private directory with a
// scenario whose one GPU process is the job (the fake NVML binds it to the
// job's real pid through `pid_file`), and the command run on it.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../test_dir.h"
#include "cli_util.h"

namespace gpuwatch::run_test {

// A private directory with a scenario whose one GPU process is the job.
class RunFixture : public gpuwatch::testing::TestDir {
 protected:
  void SetUp() override {
    TestDir::SetUp();
    WriteScenario("10GiB");
  }

  void WriteScenario(const std::string& memory) {
    std::ofstream(dir_ / "job.yaml")
        << "clock: init\ndevices:\n  - name: NVIDIA H200\n    utilization_gpu: 60\n"
           "    processes:\n      - {pid_file: "
        << (dir_ / "child.pid").string() << ", memory: " << memory
        << ", sm_util: 60}\n  - name: NVIDIA H200\n"
           "    uuid: GPU-11111111-2222-3333-4444-555555555555\n";
  }
  // The job writes its pid where the scenario looks for it, then runs `body`.
  std::string Job(const std::string& body) const {
    return "sh -c 'echo $$ > " + (dir_ / "child.pid").string() + "; " + body + "'";
  }
  struct Out {
    int code = -1;
    std::string err;
  };
  Out Run(const std::string& options, const std::string& job,
          const std::string& prefix = "") const {
    const std::string cmd = prefix +
                            "env -u GPUWATCH_FAKE_TIME PATH=" + std::string(GPUWATCH_BINARY_DIR) +
                            "/tests/transport:$PATH " + GPUWATCH_BINARY_DIR +
                            "/gpuwatch run --scenario " + (dir_ / "job.yaml").string() +
                            " -i 50ms " + options + " -- " + job + " 2>" + (dir_ / "err").string();
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, testing::Slurp(dir_ / "err")};
  }
  nlohmann::json Report() const {
    return nlohmann::json::parse(testing::Slurp(dir_ / "report.json"));
  }
};

}  // namespace gpuwatch::run_test
