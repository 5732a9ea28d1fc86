#include "analysis/sweep/sweep_search.h"

#include <gtest/gtest.h>

namespace gpuwatch::sweep {
namespace {

constexpr auto kFits = RunVerdict::kFits;
constexpr auto kOom = RunVerdict::kOom;

// Drives the planner against a job whose boundary is `largest_fit`, with a
// prediction that is `bias` off, from `start`; returns the values tried.
std::vector<long> Search(std::vector<long> start, long largest_fit, long bias,
                         long max_value = 1 << 20) {
  std::vector<Trial> trials;
  for (long v : start) trials.push_back({v, v <= largest_fit ? kFits : kOom});
  for (int guard = 0; guard < 64; ++guard) {
    auto next = NextSearchValue(trials, largest_fit + bias, max_value);
    if (!next) break;
    trials.push_back({*next, *next <= largest_fit ? kFits : kOom});
  }
  std::vector<long> values;
  for (const auto& t : trials) values.push_back(t.value);
  return values;
}

TEST(SweepSearch, AnExactPredictionIsConfirmedInTwoTrials) {
  EXPECT_EQ(Search({8, 16, 32}, 2645, 0), (std::vector<long>{8, 16, 32, 2645, 2646}));
  EXPECT_TRUE(BoundaryOf({{2645, kFits}, {2646, kOom}}).found());
}

TEST(SweepSearch, APredictionOneTooHighIsConfirmedFromBelow) {
  EXPECT_EQ(Search({8, 16, 32}, 100, 1), (std::vector<long>{8, 16, 32, 101, 100}));
}

TEST(SweepSearch, AFarOffPredictionFallsBackToBisectionAndStillEnds) {
  const auto values = Search({8, 16}, 1000, 300);
  ASSERT_GE(values.size(), 4u);
  const auto b = BoundaryOf([&] {
    std::vector<Trial> t;
    for (long v : values) t.push_back({v, v <= 1000 ? kFits : kOom});
    return t;
  }());
  EXPECT_TRUE(b.found());
  EXPECT_EQ(*b.largest_fit, 1000);
  EXPECT_LT(values.size(), 20u);
}

TEST(SweepSearch, WithoutAPredictionItDoubles) {
  EXPECT_EQ(NextSearchValue({{8, kFits}}, std::nullopt, 1 << 20), 16);
  EXPECT_EQ(NextSearchValue({{8, kFits}}, std::nullopt, 12), 12) << "capped at the maximum";
  EXPECT_EQ(NextSearchValue({{12, kFits}}, std::nullopt, 12), std::nullopt);
}

TEST(SweepSearch, FirstValueOutOfMemoryHalvesTowardsOne) {
  EXPECT_EQ(NextSearchValue({{64, kOom}}, std::nullopt, 1 << 20), 32);
  EXPECT_EQ(Search({64}, 5, 0), (std::vector<long>{64, 32, 16, 8, 4, 6, 5}))
      << "no floor: halving, then bisection";
}

TEST(SweepSearch, AllOutOfMemoryDownToOneEnds) {
  EXPECT_EQ(NextSearchValue({{1, kOom}, {2, kOom}}, std::nullopt, 1 << 20), std::nullopt);
  const Boundary b = BoundaryOf({{1, kOom}, {2, kOom}});
  EXPECT_FALSE(b.largest_fit.has_value());
  EXPECT_EQ(*b.smallest_oom, 1);
}

TEST(SweepSearch, AFitAboveAFailureIsNotTheBoundary) {
  const Boundary b = BoundaryOf({{8, kFits}, {16, kOom}, {32, kFits}});
  EXPECT_EQ(*b.largest_fit, 8);
  EXPECT_EQ(*b.smallest_oom, 16);
}

TEST(SweepSearch, UntilOomDoublesUntilTheFirstFailure) {
  EXPECT_EQ(NextUntilOom({{32, kFits}}, 1 << 20), 64);
  EXPECT_EQ(NextUntilOom({{32, kFits}, {64, kFits}}, 1 << 20), 128);
  EXPECT_EQ(NextUntilOom({{32, kFits}, {64, kOom}}, 1 << 20), std::nullopt);
  EXPECT_EQ(NextUntilOom({{32, kFits}}, 40), 40);
}

TEST(SweepSearch, DoublingAndBisectionTrials) {
  // 1 2 4 8 fit, 16 fails (5), then 12 10 9 (3).
  EXPECT_EQ(DoublingBisectionTrials(1, 9), 8);
  // 8 16 32 ... 2048 fit (9), 4096 fails, bisection over 2048..4096: 11.
  EXPECT_EQ(DoublingBisectionTrials(8, 2645), 21);
  // A start that does not fit halves first: 64 32 fail, 16 fits, then 24 20 18 17.
  EXPECT_EQ(DoublingBisectionTrials(64, 16), 7);
}

}  // namespace
}  // namespace gpuwatch::sweep
