#include "host/proc_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuwatch::host {
namespace {

using namespace std::string_literals;

TEST(ParseStat, ReadsTimesFromTheirFieldNumbers) {
  auto s = ParseStat(
      "4242 (python) R 1 4242 4242 0 -1 4194560 100 0 0 0 1500 250 0 0 20 0 4 0 987654 "
      "123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->comm, "python");
  EXPECT_EQ(s->state, 'R');
  EXPECT_EQ(s->utime_ticks, 1500u);
  EXPECT_EQ(s->stime_ticks, 250u);
  EXPECT_EQ(s->start_ticks, 987654u);
}

TEST(ParseStat, CommWithParenthesesAndSpacesIsCutAtTheLastParen) {
  auto s = ParseStat("77 (evil) (x 1) S 1 77 77 0 -1 0 0 0 0 0 11 22 0 0 20 0 1 0 333 0 0\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->comm, "evil) (x 1");
  EXPECT_EQ(s->utime_ticks, 11u);
  EXPECT_EQ(s->stime_ticks, 22u);
  EXPECT_EQ(s->start_ticks, 333u);
}

TEST(ParseStat, TruncatedOrGarbledLineIsRejected) {
  EXPECT_FALSE(ParseStat("77 (python) S 1 77 77 0 -1 0 0 0 0 0 11 22").has_value());
  EXPECT_FALSE(ParseStat("").has_value());
  EXPECT_FALSE(ParseStat("77 python S").has_value());
  EXPECT_FALSE(
      ParseStat("77 (p) S 1 77 77 0 -1 0 0 0 0 0 x1 22 0 0 20 0 1 0 333 0 0\n").has_value());
}

TEST(ParseStatus, ReadsRealUidRssAndNspid) {
  StatusInfo s = ParseStatus(
      "Name:\tpython\nUid:\t1001\t0\t1001\t1001\nVmRSS:\t  123456 kB\nNSpid:\t5000\t12\t1\n");
  EXPECT_EQ(s.uid, 1001u);
  EXPECT_EQ(s.rss_kb, 123456u);
  EXPECT_EQ(s.nspid, (std::vector<std::uint32_t>{5000, 12, 1}));
}

TEST(ParseStatus, ZombieHasNoRss) {
  StatusInfo s = ParseStatus("Name:\tdefunct\nState:\tZ (zombie)\nUid:\t5\t5\t5\t5\n");
  EXPECT_EQ(s.uid, 5u);
  EXPECT_FALSE(s.rss_kb.has_value());
  EXPECT_TRUE(s.nspid.empty());
}

TEST(CommandLine, NulSeparatedArgumentsBecomeOneLine) {
  EXPECT_EQ(CommandLine("python\0train.py\0--name\0my run\0"s, "python"),
            "python train.py --name my run");
}

TEST(CommandLine, EmptyFallsBackToBracketedComm) {
  EXPECT_EQ(CommandLine("", "kworker/0:1"), "[kworker/0:1]");
  EXPECT_EQ(CommandLine("\0"s, "zombie"), "[zombie]");
}

TEST(ParseBootTime, FindsTheBtimeLine) {
  EXPECT_EQ(ParseBootTime("cpu  1 2 3\nbtime 1700000000\nprocesses 5\n"), 1700000000);
  EXPECT_FALSE(ParseBootTime("cpu  1 2 3\n").has_value());
}

TEST(HidesProcesses, ReadsHidepidOfTheProcMountAtThePoint) {
  const std::string plain =
      "22 1 0:5 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
      "23 1 0:6 / /sys rw,nosuid shared:2 - sysfs sysfs rw\n";
  EXPECT_FALSE(HidesProcesses(plain, "/proc"));
  const std::string hidden =
      "22 1 0:5 / /proc rw,nosuid,relatime shared:12 - proc proc rw,hidepid=2,gid=4\n";
  EXPECT_TRUE(HidesProcesses(hidden, "/proc"));
  EXPECT_FALSE(HidesProcesses(hidden, "/host/proc")) << "another mount point";
  EXPECT_TRUE(HidesProcesses("7 1 0:5 / /proc rw - proc proc rw,hidepid=invisible\n", "/proc"));
  EXPECT_FALSE(HidesProcesses("7 1 0:5 / /proc rw - proc proc rw,hidepid=0\n", "/proc"));
  EXPECT_FALSE(HidesProcesses("7 1 0:5 / /proc rw - proc proc rw,hidepid=off\n", "/proc"));
  EXPECT_FALSE(HidesProcesses("7 1 0:5 / /proc rw - tmpfs x rw,hidepid=2\n", "/proc"))
      << "not a proc filesystem";
  EXPECT_FALSE(HidesProcesses(hidden + "30 22 0:40 / /proc rw - proc proc rw\n", "/proc"))
      << "the last mount over /proc is the one seen";
  EXPECT_FALSE(HidesProcesses("garbage\n\n- - -", "/proc"));
}

TEST(ParseUptime, FirstNumberIsSecondsSinceBoot) {
  EXPECT_DOUBLE_EQ(*ParseUptime("12345.67 99999.00\n"), 12345.67);
  EXPECT_FALSE(ParseUptime("").has_value());
  EXPECT_FALSE(ParseUptime("abc 1\n").has_value());
}

}  // namespace
}  // namespace gpuwatch::host
