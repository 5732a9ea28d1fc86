#include "gpuwatch/units.h"

#include <gtest/gtest.h>

namespace gpuwatch {
namespace {

using std::chrono::milliseconds;

TEST(Units, ParsesDurations) {
  EXPECT_EQ(*ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("30s"), milliseconds(30'000));
  EXPECT_EQ(*ParseDuration("1.5s"), milliseconds(1500));
  EXPECT_EQ(*ParseDuration("5m"), milliseconds(300'000));
  EXPECT_EQ(*ParseDuration("2h"), milliseconds(7'200'000));
  EXPECT_EQ(*ParseDuration("1d"), milliseconds(86'400'000));
  EXPECT_EQ(*ParseDuration("10"), milliseconds(10'000)) << "plain numbers are seconds";
  EXPECT_EQ(*ParseDuration(" 100 ms "), milliseconds(100));
}

TEST(Units, RejectsBadDurationsNamingTheText) {
  for (const char* bad : {"", "ms", "5 parsecs", "-3s", "1.2.3s", "abc", "1e400s"}) {
    auto r = ParseDuration(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find("is not a duration"), std::string::npos);
  }
  EXPECT_NE(ParseDuration("5 parsecs").error().message().find("\"5 parsecs\""), std::string::npos);
}

TEST(Units, RejectsNonFiniteAndAbsurdDurations) {
  // What once reached a double-to-integer cast in `query -l`.
  for (const char* bad : {"nan", "inf", "-inf", "1e300", "infs", "NaNms", "0x10s"}) {
    auto r = ParseDuration(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find("is not a duration"), std::string::npos) << bad;
  }
  EXPECT_EQ(*ParseDuration("365d"), kLongestDuration);
  for (const char* bad : {"366d", "100000000000000000000", "9999999999999999999999h"}) {
    auto r = ParseDuration(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find("is too long: a duration is at most 365d"),
              std::string::npos)
        << r.error().message();
  }
}

TEST(Units, ParsesSizes) {
  EXPECT_EQ(*ParseSize("512MiB"), 512ull << 20);
  EXPECT_EQ(*ParseSize("8GiB"), 8ull << 30);
  EXPECT_EQ(*ParseSize("1.5TiB"), 3ull << 39);
  EXPECT_EQ(*ParseSize("80GB"), 80'000'000'000ull);
  EXPECT_EQ(*ParseSize("4096B"), 4096ull);
  EXPECT_EQ(*ParseSize("2G"), 2ull << 30);
  EXPECT_EQ(*ParseSize("0"), 0ull) << "0 needs no unit";
  EXPECT_EQ(*ParseSize("17179869183GiB"), 17179869183ull << 30) << "1 GiB short of 2^64 bytes";
}

TEST(Units, RefusesABareNumberNamingTheUnitsItCouldMean) {
  auto r = ParseSize("40");
  ASSERT_FALSE(r) << "40 B or 40 GiB? (--memory-limit 40)";
  EXPECT_EQ(r.error().message(),
            "\"40\" has no unit: write e.g. 40GiB or 40MiB (40B if you mean bytes)");
  EXPECT_FALSE(ParseSize("1.5"));
}

TEST(Units, RefusesSizesBeyond64BitBytes) {
  auto r = ParseSize("100000000000000000000000000GiB");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("is too large: a size is at most 16 EiB"), std::string::npos)
      << r.error().message();
  EXPECT_FALSE(ParseSize("16EiB")) << "no such unit";
  EXPECT_FALSE(ParseSize("17179869184GiB")) << "exactly 2^64 bytes";
}

TEST(Units, RejectsBadSizes) {
  for (const char* bad : {"", "GiB", "12 parsecs", "-1GiB", "1e30TiB"}) {
    auto r = ParseSize(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find("is not a size"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuwatch
