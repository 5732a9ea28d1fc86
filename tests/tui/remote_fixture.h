// What the tests of RemoteHost against live servers share: a directory of
// the test's own for their files, and endpoints with a timeout patient enough
// for a loaded machine.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tui/remote_api.h"

namespace gpuwatch::tui::remote_test {

namespace fs = std::filesystem;

// For a server to start on 2 loaded cores.
inline constexpr std::chrono::seconds kDeadline{60};

class RemoteDaemon : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gw-remote-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  RemoteEndpoint Endpoint(const std::string& address) {
    auto e = ParseEndpoint(address);
    EXPECT_TRUE(e) << e.error().message();
    e->timeout = std::chrono::seconds(10);  // a loaded machine; nothing here waits for it to pass
    return *e;
  }
  fs::path dir_;
};

}  // namespace gpuwatch::tui::remote_test
