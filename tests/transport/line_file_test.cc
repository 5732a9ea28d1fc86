#include "transport/line_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "file_size_limit.h"

namespace gpuwatch {
namespace {
namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(LineFile, AppendsLinesAndFlushesOnClose) {
  const fs::path path = fs::temp_directory_path() / ("gw-lines-" + std::to_string(getpid()));
  fs::remove(path);
  {
    auto f = LineFile::Open(path.string(), nullptr);
    ASSERT_TRUE(f) << f.error().message();
    for (int i = 0; i < 1000; ++i) (*f)->Write("line " + std::to_string(i));
  }  // the destructor writes what is queued
  const std::string text = Slurp(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1000);
  EXPECT_EQ(text.rfind("line 0\nline 1\n", 0), 0u);
  {
    auto f = LineFile::Open(path.string(), nullptr);
    ASSERT_TRUE(f);
    (*f)->Write("more");
    (*f)->Flush();
    EXPECT_NE(Slurp(path).find("line 999\nmore\n"), std::string::npos)
        << "appends, keeps what was there";
  }
  fs::remove(path);
}

TEST(LineFile, UnwritablePathFailsAtOpenNamingThePath) {
  auto f = LineFile::Open("/nonexistent-dir/out.csv", nullptr);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message().find("/nonexistent-dir/out.csv"), std::string::npos);
}

TEST(LineFile, DiskFullWarnsOnceAndKeepsGoing) {
  int warnings = 0;
  std::string said;
  auto f = LineFile::Open("/dev/full", [&](const std::string& m) {
    ++warnings;
    said = m;
  });
  ASSERT_TRUE(f) << f.error().message();
  for (int round = 0; round < 3; ++round) {
    (*f)->Write("x");
    (*f)->Flush();
  }
  EXPECT_EQ(warnings, 1) << "one warning for the whole failing stretch";
  EXPECT_NE(said.find("/dev/full"), std::string::npos);
  EXPECT_NE(said.find("No space left on device"), std::string::npos) << said;
  EXPECT_EQ((*f)->failed_writes(), 3u);
}

TEST(LineFile, AShortWriteIsCutBackToTheLastWholeLine) {
  const fs::path path = fs::temp_directory_path() / ("gw-short-" + std::to_string(getpid()));
  fs::remove(path);
  const auto line = [](int i) { return "{\"type\":\"sample\",\"n\":" + std::to_string(i) + "}"; };
  int warnings = 0;
  std::string said;
  auto f = LineFile::Open(path.string(), [&](const std::string& m) {
    ++warnings;
    said = m;
  });
  ASSERT_TRUE(f) << f.error().message();
  for (int i = 0; i < 3; ++i) (*f)->Write(line(i));
  (*f)->Flush();
  const auto whole = fs::file_size(path);
  {
    // Room for line 3 and 10 bytes of line 4: 4 is cut mid-line, 5 and 6
    // find the file full.
    testing::FileSizeLimit full(whole + line(3).size() + 1 + 10);
    ASSERT_TRUE(full.ok());
    (*f)->Write(line(3));
    (*f)->Write(line(4));
    (*f)->Flush();
    (*f)->Write(line(5));
    (*f)->Flush();
    (*f)->Write(line(6));
    (*f)->Flush();
  }
  for (int i = 7; i < 9; ++i) (*f)->Write(line(i));
  (*f)->Close();
  EXPECT_EQ(Slurp(path), line(0) + "\n" + line(1) + "\n" + line(2) + "\n" + line(3) + "\n" +
                             line(7) + "\n" + line(8) + "\n")
      << "whole lines only: the piece of line 4 is gone, nothing before it is";
  EXPECT_EQ((*f)->failed_writes(), 3u);
  EXPECT_EQ(warnings, 1);
  EXPECT_NE(said.find(path.string()), std::string::npos) << said;
  fs::remove(path);
}

TEST(LineFile, AFileEndingInPartOfALineIsContinuedOnANewLine) {
  const fs::path path = fs::temp_directory_path() / ("gw-partial-" + std::to_string(getpid()));
  std::ofstream(path) << "whole\n{\"cut\":";  // a writer stopped part-way
  {
    auto f = LineFile::Open(path.string(), nullptr);
    ASSERT_TRUE(f) << f.error().message();
    (*f)->Write("next");
    (*f)->Write("last");
  }
  EXPECT_EQ(Slurp(path), "whole\n{\"cut\":\nnext\nlast\n")
      << "kept, on a line of its own, never glued to the next line";
  fs::remove(path);
}

TEST(LineFile, BoundedQueueDropsOldestAndCounts) {
  const fs::path path = fs::temp_directory_path() / ("gw-bounded-" + std::to_string(getpid()));
  fs::remove(path);
  auto f = LineFile::Open(path.string(), nullptr, /*max_queued=*/4);
  ASSERT_TRUE(f);
  for (int i = 0; i < 10000; ++i) (*f)->Write(std::to_string(i));
  (*f)->Close();
  const std::string text = Slurp(path);
  const auto lines = std::count(text.begin(), text.end(), '\n');
  EXPECT_EQ(lines + static_cast<long>((*f)->dropped()), 10000) << "every line written or counted";
  EXPECT_NE(text.find("9999\n"), std::string::npos) << "the newest are kept";
  fs::remove(path);
}

}  // namespace
}  // namespace gpuwatch
