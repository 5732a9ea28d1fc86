#include "store/drop_oldest_queue.h"

#include <gtest/gtest.h>

namespace gpuwatch::store {
namespace {

TEST(DropOldestQueue, DropsOldestWhenFullAndCounts) {
  DropOldestQueue<int> q(3);
  EXPECT_FALSE(q.Push(1));
  EXPECT_FALSE(q.Push(2));
  EXPECT_FALSE(q.Push(3));
  EXPECT_TRUE(q.Push(4));
  EXPECT_TRUE(q.Push(5));
  EXPECT_EQ(q.dropped(), 2u);
  EXPECT_EQ(q.TakeAll(), (std::vector<int>{3, 4, 5}));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.dropped(), 2u);  // the count survives TakeAll
}

TEST(DropOldestQueue, KeepsOrderBelowCapacity) {
  DropOldestQueue<int> q(10);
  for (int i = 0; i < 5; ++i) q.Push(i);
  EXPECT_EQ(q.TakeAll(), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(q.dropped(), 0u);
}

}  // namespace
}  // namespace gpuwatch::store
