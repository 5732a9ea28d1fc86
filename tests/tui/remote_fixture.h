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

#include "../test_dir.h"
#include "tui/remote_api.h"

namespace gpuwatch::tui::remote_test {

namespace fs = std::filesystem;

// For a server to start on 2 loaded cores.
inline constexpr std::chrono::seconds kDeadline{60};

class RemoteDaemon : public gpuwatch::testing::TestDir {
 protected:
  RemoteEndpoint Endpoint(const std::string& address) {
    auto e = ParseEndpoint(address);
    EXPECT_TRUE(e) << e.error().message();
    e->timeout = std::chrono::seconds(10);  // a loaded machine; nothing here waits for it to pass
    return *e;
  }
};

}  // namespace gpuwatch::tui::remote_test
