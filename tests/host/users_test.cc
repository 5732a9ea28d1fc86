#include "host/users.h"

#include <gtest/gtest.h>

#include <chrono>

#include "fake_proc.h"

namespace gpuwatch::host {
namespace {

TEST(ParsePasswd, FirstEntryForAUidWinsAndBadLinesAreSkipped) {
  auto names = ParsePasswd(
      "# comment\nalice:x:1001:1001::/home/alice:/bin/sh\nalias:x:1001:1001::/:/bin/sh\n"
      "broken line\n:x:5:5::/:/bin/sh\nbob:x:notanumber:1::/:/bin/sh\ncarol:x:1003:1003::/:\n");
  EXPECT_EQ(names.size(), 2u);
  EXPECT_EQ(names[1001], "alice");
  EXPECT_EQ(names[1003], "carol");
}

TEST(UserTable, UnknownUidIsShownAsItsNumber) {
  testing::FakeProcTree tree;
  UserTable users(tree.root() / "etc" / "passwd", /*use_nss=*/false);
  EXPECT_EQ(users.Name(1001), "alice");
  EXPECT_EQ(users.Name(4242), "4242");
}

TEST(UserTable, MissingFileGivesNumbers) {
  testing::FakeProcTree tree;
  UserTable users(tree.root() / "etc" / "nope", /*use_nss=*/false);
  EXPECT_EQ(users.Name(1001), "1001");
}

TEST(UserTable, RereadsTheFileWhenAnUnknownUidAppearsAfterItChanged) {
  testing::FakeProcTree tree;
  std::filesystem::path passwd = tree.root() / "etc" / "passwd";
  UserTable users(passwd, /*use_nss=*/false);
  EXPECT_EQ(users.Name(1007), "1007");
  tree.Write("etc/passwd", "gina:x:1007:1007::/home/gina:/bin/sh\n");
  std::filesystem::last_write_time(
      passwd, std::filesystem::last_write_time(passwd) + std::chrono::seconds(5));
  EXPECT_EQ(users.Name(1007), "gina");
}

}  // namespace
}  // namespace gpuwatch::host
