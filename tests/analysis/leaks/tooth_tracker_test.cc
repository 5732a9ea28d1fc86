#include "analysis/leaks/tooth_tracker.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuwatch::leaks {
namespace {

TEST(ToothTracker, NoToothBeforeARiseIsGivenBack) {
  ToothTracker teeth;
  for (int t = 0; t < 100; ++t) teeth.Add(t, t * 10.0, 5);
  EXPECT_EQ(teeth.longest_s(), 0);
}

TEST(ToothTracker, MeasuresHowLongMemoryStaysUp) {
  ToothTracker teeth;
  // Up 60 at t = 10..19 of every 30 s, else 0: from the last sample at 0
  // (t = 9) to the first back at 0 (t = 20).
  for (int t = 0; t < 300; ++t) teeth.Add(t, (t % 30 >= 10 && t % 30 < 20) ? 60 : 0, 20);
  EXPECT_DOUBLE_EQ(teeth.longest_s(), 11);
}

TEST(ToothTracker, IgnoresWigglesBelowTheThreshold) {
  ToothTracker teeth;
  for (int t = 0; t < 300; ++t) teeth.Add(t, 100 + (t % 2) * 5.0, 20);
  EXPECT_EQ(teeth.longest_s(), 0);
}

TEST(ToothTracker, KeepsTheLongestOfTheRecentTeeth) {
  ToothTracker teeth(2);
  double t = 0;
  auto tooth = [&](double up_s) {
    for (double s = 0; s < up_s; s += 1, t += 1) teeth.Add(t, 50, 10);
    for (int s = 0; s < 5; ++s, t += 1) teeth.Add(t, 0, 10);
  };
  tooth(40);
  tooth(5);
  tooth(6);
  // 6 s up, from the last sample down to the first back down.
  EXPECT_DOUBLE_EQ(teeth.longest_s(), 7) << "the 40 s tooth is no longer among the last two";
}

}  // namespace
}  // namespace gpuwatch::leaks
