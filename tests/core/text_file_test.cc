#include "core/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpuwatch {
namespace {
namespace fs = std::filesystem;

class TextFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gw-text-file-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TextFile, ReadsARegularFile) {
  std::ofstream(dir_ / "r.yaml") << "rules: []\n";
  auto text = ReadTextFile((dir_ / "r.yaml").string());
  ASSERT_TRUE(text) << text.error().message();
  EXPECT_EQ(*text, "rules: []\n");
  EXPECT_TRUE(CheckTextFile((dir_ / "r.yaml").string()).ok());
}

TEST_F(TextFile, SaysWhatThePathIsWhenItIsNotARegularFile) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {dir_.string(), dir_.string() + " is a directory, not a regular file"},
      {fifo, fifo + " is a FIFO, not a regular file"},
      {"/dev/zero", "/dev/zero is a character device, not a regular file"},
  };
  for (const auto& [path, says] : cases) {
    auto text = ReadTextFile(path);  // returns at once: nothing is opened
    ASSERT_FALSE(text) << path;
    EXPECT_EQ(text.error().code(), Status::Code::kInvalidArgument) << path;
    EXPECT_EQ(text.error().message(), says);
    EXPECT_EQ(CheckTextFile(path).message(), says);
  }
}

TEST_F(TextFile, RefusesAFileLargerThanTheBound) {
  std::ofstream(dir_ / "big.yaml") << std::string(2048, '#');
  auto text = ReadTextFile((dir_ / "big.yaml").string(), 1024);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message(), (dir_ / "big.yaml").string() +
                                        " is 2048 bytes, larger than the 1 KiB such a file may be");
  EXPECT_TRUE(ReadTextFile((dir_ / "big.yaml").string(), 2048));
}

TEST_F(TextFile, AMissingFileIsNotFound) {
  auto text = ReadTextFile((dir_ / "missing.yaml").string());
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code(), Status::Code::kNotFound);
  EXPECT_EQ(text.error().message(),
            "cannot read " + (dir_ / "missing.yaml").string() + ": No such file or directory");
}

}  // namespace
}  // namespace gpuwatch
