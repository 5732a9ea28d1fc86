#include "host/proc_files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "fake_proc.h"

namespace gpuwatch::host {
namespace {

TEST(ProcDir, HandleOnAnExitedProcessReadsNothing) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  Result<ProcDir> dir = ProcDir::Open("/proc/" + std::to_string(child));
  ASSERT_TRUE(dir.has_value()) << dir.error().message();
  EXPECT_TRUE(dir->Read("stat").has_value());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  Result<std::string> after = dir->Read("stat");
  ASSERT_FALSE(after.has_value());
  EXPECT_EQ(after.error().code(), Status::Code::kNotFound);
}

TEST(ProcDir, MissingDirectoryIsNotFound) {
  testing::FakeProcTree tree;
  Result<ProcDir> dir = ProcDir::Open(tree.proc() / "99999");
  ASSERT_FALSE(dir.has_value());
  EXPECT_EQ(dir.error().code(), Status::Code::kNotFound);
}

TEST(ProcDir, FileRemovedAfterOpenIsNotFound) {
  testing::FakeProcTree tree;
  testing::FakeProcess p;
  p.pid = 10;
  tree.Add(p);
  Result<ProcDir> dir = ProcDir::Open(tree.proc() / "10");
  ASSERT_TRUE(dir.has_value());
  tree.Remove(10);
  Result<std::string> stat = dir->Read("stat");
  ASSERT_FALSE(stat.has_value());
  EXPECT_EQ(stat.error().code(), Status::Code::kNotFound);
}

TEST(ReadWholeFile, UnreadableFileIsPermissionDenied) {
  testing::FakeProcTree tree;
  tree.Write("secret", "x");
  std::filesystem::permissions(tree.root() / "secret", std::filesystem::perms::none);
  testing::AsUnprivilegedUser unprivileged;
  Result<std::string> text = ReadWholeFile(tree.root() / "secret");
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code(), Status::Code::kPermissionDenied);
}

}  // namespace
}  // namespace gpuwatch::host
