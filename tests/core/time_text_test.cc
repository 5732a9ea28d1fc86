#include "core/time_text.h"

#include <gtest/gtest.h>

namespace gpuwatch {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

TEST(Rfc3339, WritesUtcWithMilliseconds) {
  EXPECT_EQ(Rfc3339(system_clock::time_point(milliseconds(1714573385123))),
            "2024-05-01T14:23:05.123Z");
  EXPECT_EQ(Rfc3339(system_clock::time_point(milliseconds(0))), "1970-01-01T00:00:00.000Z");
}

TEST(Rfc3339, ATimeBefore1970KeepsItsMillisecondsPositive) {
  EXPECT_EQ(Rfc3339(system_clock::time_point(milliseconds(-1))), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(Rfc3339(system_clock::time_point(milliseconds(-1500))), "1969-12-31T23:59:58.500Z");
}

}  // namespace
}  // namespace gpuwatch
