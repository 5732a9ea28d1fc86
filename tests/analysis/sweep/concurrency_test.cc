#include "analysis/sweep/concurrency.h"

#include <gtest/gtest.h>

namespace gpuwatch::sweep {
namespace {

ConcurrencyLevel Level(int copies, double total, bool oom = false) {
  ConcurrencyLevel l;
  l.copies = copies;
  l.total_throughput = total;
  l.oom = oom;
  return l;
}

TEST(Concurrency, HoldsTheLevelAfterWhichThroughputStopsGrowing) {
  const auto v = JudgeConcurrency({Level(1, 10), Level(2, 19), Level(3, 27), Level(4, 27.5)});
  EXPECT_EQ(v.holds, 3);
  EXPECT_NE(v.reason.find("stops growing"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("4 copies"), std::string::npos) << v.reason;
}

TEST(Concurrency, MemoryRunningOutEndsIt) {
  const auto v = JudgeConcurrency({Level(1, 10), Level(2, 20), Level(3, 0, true)});
  EXPECT_EQ(v.holds, 2);
  EXPECT_EQ(v.reason, "memory runs out at 3 copies");
}

TEST(Concurrency, StillGrowingAtTheLastLevel) {
  const auto v = JudgeConcurrency({Level(1, 10), Level(2, 20)});
  EXPECT_EQ(v.holds, 2);
  EXPECT_NE(v.reason.find("still grows"), std::string::npos);
}

TEST(Concurrency, NotEvenOneCopy) {
  const auto v = JudgeConcurrency({Level(1, 0, true)});
  EXPECT_FALSE(v.holds.has_value());
  EXPECT_EQ(v.reason, "memory runs out already at 1 copy");
}

}  // namespace
}  // namespace gpuwatch::sweep
