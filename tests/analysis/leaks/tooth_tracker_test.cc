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

TEST(ToothTracker, ADropFirstSeenAsAWobbleIsAsLongAsTheFallItBecomes) {
  // A 75 s cycle rising 0 -> ~97, with a wobble that dips 25 just before the
  // fall: the zig-zag sees the dip as a drop (12 s since memory was last that
  // low), and the cycle's fall to 0 comes while it is already falling. The
  // tooth is the cycle, not the dip, or the wobble hides the cycle from the
  // detector, which then takes each rising edge for growth.
  ToothTracker teeth;
  for (int t = 0; t < 600; ++t) {
    const int phase = t % 75;
    const double value = phase == 74 ? 0 : phase == 73 ? 72 : phase * 100.0 / 75;
    teeth.Add(t, value, 20);
  }
  EXPECT_GE(teeth.longest_s(), 60);
}

}  // namespace
}  // namespace gpuwatch::leaks
