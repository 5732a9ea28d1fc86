// A test's own directory: under the system's temporary directory, named by
// the process and the running test (so tests run side by side by ctest never
// share one), empty at the start and removed with what it holds at the end.
// A fixture that needs files derives from TestDir; one that overrides SetUp
// calls TestDir::SetUp() first.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpuwatch::testing {

class TestDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    // Short: a daemon's socket under it must fit sun_path's 108 bytes.
    std::string name = std::string("gw-") + test->name() + "-" + std::to_string(getpid());
    std::replace(name.begin(), name.end(), '/', '_');  // parameterised tests: Suite/Name/0
    dir_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The path of `name` in the directory.
  std::string File(const std::string& name) const { return (dir_ / name).string(); }
  // Writes `text` to `name` in the directory; its path.
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return File(name);
  }

  std::filesystem::path dir_;
};

}  // namespace gpuwatch::testing
