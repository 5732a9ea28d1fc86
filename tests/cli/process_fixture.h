// A gpuwatch process run by a test: started with arguments and environment,
// its stdout and stderr in a log file that the test reads while it runs,
// signalled, and waited for. For the daemon (serve) and for commands tested
// under signals and hangs.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_util.h"

namespace gpuwatch_test {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

using gpuwatch::testing::Slurp;

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gw-proc-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }
  // Starts the daemon; `env` entries are set in the child only.
  void Start(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      const int log = open((dir_ / "log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(log, STDERR_FILENO);
      dup2(log, STDOUT_FILENO);
      if (chdir(GPUWATCH_SOURCE_DIR) != 0) _exit(126);
      unsetenv("GPUWATCH_FAKE_TIME");
      // Its own leases and answer socket, unless `env` names others.
      setenv("GPUWATCH_RUNTIME_DIR", (dir_ / "run").c_str(), 1);
      for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
      std::vector<std::string> all = {std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch"};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  // Waits until the log says where it listens; returns the port (0 if never).
  int Port() {
    const std::regex listening("listening on https?://127\\.0\\.0\\.1:(\\d+)/");
    for (int i = 0; i < 300; ++i) {
      std::smatch m;
      const std::string log = Slurp(dir_ / "log");
      if (std::regex_search(log, m, listening)) return std::stoi(m[1]);
      std::this_thread::sleep_for(50ms);
    }
    return 0;
  }
  bool WaitForLog(const std::string& text) {
    for (int i = 0; i < 300; ++i) {
      if (Slurp(dir_ / "log").find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
  // Waits for the daemon to exit; its exit status, or -1.
  int Exit() {
    for (int i = 0; i < 200; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(50ms);
    }
    return -1;
  }
  fs::path dir_;
  pid_t pid_ = -1;
};

}  // namespace gpuwatch_test
