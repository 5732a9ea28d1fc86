#include "analysis/sweep/sweep_fit.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuwatch::sweep {
namespace {

constexpr double kMiB = 1024.0 * 1024;
constexpr double kGiB = 1024 * kMiB;

std::vector<MemoryPoint> Points(const std::vector<double>& values, double a, double b, double c,
                                double noise = 0) {
  std::vector<MemoryPoint> out;
  int i = 0;
  for (double v : values) {
    const double wiggle = noise * ((i++ % 2 == 0) ? 1 : -1);  // deterministic +-noise
    out.push_back({v, a + b * v + c * v * v + wiggle});
  }
  return out;
}

TEST(SweepFit, AnExactLineIsLinearWithItsCoefficients) {
  auto fit = FitMemory(Points({8, 16, 32, 64}, 2 * kGiB, 48 * kMiB, 0));
  ASSERT_TRUE(fit.has_value()) << fit.error().message();
  EXPECT_EQ(fit->model, MemoryFit::Model::kLinear);
  EXPECT_EQ(fit->verdict, "linear");
  EXPECT_NEAR(fit->a, 2 * kGiB, 1);
  EXPECT_NEAR(fit->b, 48 * kMiB, 1e-3);
  EXPECT_NEAR(fit->r2_linear, 1.0, 1e-12);
  EXPECT_NE(fit->evidence.find("the line fits exactly"), std::string::npos) << fit->evidence;
}

TEST(SweepFit, AnExactQuadraticGrowsFasterThanLinear) {
  auto fit = FitMemory(Points({8, 16, 32, 64, 128}, 2 * kGiB, 48 * kMiB, 2 * kMiB));
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->model, MemoryFit::Model::kQuadratic);
  EXPECT_EQ(fit->verdict, "grows faster than linear");
  EXPECT_NEAR(fit->c, 2 * kMiB, 1e-3);
  EXPECT_NEAR(fit->b, 48 * kMiB, 1);
  EXPECT_NE(fit->evidence.find("the quadratic fits exactly"), std::string::npos) << fit->evidence;
}

// Concave (a fixed workspace amortised over small batches): said, but
// predicted with the line, which gives more memory beyond the values tried.
TEST(SweepFit, AConcaveQuadraticIsSaidButPredictedWithTheLine) {
  auto fit = FitMemory(Points({8, 16, 32, 64, 128}, 2 * kGiB, 64 * kMiB, -0.2 * kMiB));
  ASSERT_TRUE(fit.has_value()) << fit.error().message();
  EXPECT_EQ(fit->verdict, "grows slower than linear");
  EXPECT_EQ(fit->model, MemoryFit::Model::kLinear);
  EXPECT_EQ(fit->c, 0);
  EXPECT_NE(fit->evidence.find("predicted with the line"), std::string::npos) << fit->evidence;
  EXPECT_GT(PredictBytes(*fit, 1000), 2 * kGiB + 64 * kMiB * 1000 - 0.2 * kMiB * 1e6);
}

// ResNet-50 (torchvision, bf16 autocast) on the H200, 2026-12-03
// (tests/gpu/run_sweep_h200.sh; docs/sweep.md): NVML's peak process memory of
// the four small runs. Slightly concave; predicted with the line: 2958 under
// all 140.40 GiB free, where the real boundary was 3313 fits, 3344 does not.
TEST(SweepFit, TheH200ResNet50SmallRunsPredictTheBoundaryCautiously) {
  auto fit =
      FitMemory({{8, 1551892480.0}, {16, 1977614336.0}, {32, 2810183680.0}, {64, 4389339136.0}});
  ASSERT_TRUE(fit.has_value()) << fit.error().message();
  EXPECT_EQ(fit->model, MemoryFit::Model::kLinear) << fit->evidence;
  const Capacity all = LargestFitting(*fit, 150754820096.0, 0);
  ASSERT_TRUE(all.largest.has_value()) << all.note;
  EXPECT_EQ(*all.largest, 2958);
  EXPECT_LT(*all.largest, 3313) << "on the cautious side of the real boundary";
}

TEST(SweepFit, NoisyLineStaysLinearByTheFTest) {
  auto fit = FitMemory(Points({8, 16, 24, 32, 48, 64}, 2 * kGiB, 48 * kMiB, 0, 30 * kMiB));
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->verdict, "linear") << fit->evidence;
  ASSERT_TRUE(fit->f_statistic.has_value()) << fit->evidence;
  EXPECT_LE(*fit->f_statistic, *fit->f_critical);
  ASSERT_TRUE(fit->residual_bytes.has_value());
  EXPECT_GT(*fit->residual_bytes, 10 * kMiB);
}

TEST(SweepFit, NoisyQuadraticIsFoundByTheFTest) {
  auto fit = FitMemory(Points({8, 16, 24, 32, 48, 64}, 2 * kGiB, 48 * kMiB, 4 * kMiB, 10 * kMiB));
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->verdict, "grows faster than linear") << fit->evidence;
  EXPECT_GT(*fit->f_statistic, *fit->f_critical);
}

TEST(SweepFit, SignificantButTinyCurvatureCountsAsLinear) {
  // c*64^2 = 0.4 MiB against ~5 GiB at 64: well under 1 %.
  auto fit = FitMemory(Points({8, 16, 32, 64}, 2 * kGiB, 48 * kMiB, 100.0));
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->verdict, "linear") << fit->evidence;
  EXPECT_NE(fit->evidence.find("< 1 %"), std::string::npos) << fit->evidence;
}

TEST(SweepFit, ThreeValuesCannotTestCurvature) {
  auto fit = FitMemory(Points({8, 16, 32}, kGiB, 10 * kMiB, 1 * kMiB));
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->verdict, "linear");
  EXPECT_FALSE(fit->r2_quadratic.has_value());
  EXPECT_NE(fit->evidence.find("needs 4 or more"), std::string::npos) << fit->evidence;
}

TEST(SweepFit, OnePointIsRefusedSayingHowManyThereAre) {
  auto fit = FitMemory({{8, kGiB}, {8, kGiB}});
  ASSERT_FALSE(fit.has_value());
  EXPECT_NE(fit.error().message().find("there is 1"), std::string::npos) << fit.error().message();
  EXPECT_FALSE(FitMemory({}).has_value());
  EXPECT_FALSE(FitMemory({{8, 0}, {16, 0}}).has_value()) << "no memory measured is no point";
}

TEST(SweepFit, TwoPointsGiveALineWithoutAnInterval) {
  auto fit = FitMemory({{10, 2 * kGiB}, {20, 3 * kGiB}});
  ASSERT_TRUE(fit.has_value());
  EXPECT_NEAR(fit->b, kGiB / 10, 1e-3);
  EXPECT_FALSE(fit->residual_bytes.has_value());
  const Capacity cap = LargestFitting(*fit, 11 * kGiB, 0);
  ASSERT_TRUE(cap.largest.has_value());
  EXPECT_EQ(*cap.largest, 100);  // 1 GiB + 0.1 GiB * 100 = 11 GiB
  EXPECT_FALSE(cap.low.has_value());
  EXPECT_NE(cap.note.find("no interval"), std::string::npos);
}

TEST(SweepFit, LargestFittingHonoursTheMargin) {
  auto fit = FitMemory(Points({8, 16, 32, 64}, 2 * kGiB, 48 * kMiB, 0));
  ASSERT_TRUE(fit.has_value());
  // Budget 0.9 * 140 GiB = 126 GiB: (126 GiB - 2 GiB) / 48 MiB = 2645.33.
  const Capacity cap = LargestFitting(*fit, 140 * kGiB, 0.10);
  EXPECT_NEAR(cap.budget_bytes, 126 * kGiB, 1);
  ASSERT_TRUE(cap.largest.has_value());
  EXPECT_EQ(*cap.largest, 2645);
  ASSERT_TRUE(cap.low && cap.high);
  EXPECT_EQ(*cap.low, 2645) << "an exact fit has no spread";
  EXPECT_EQ(*cap.high, 2645);
}

TEST(SweepFit, NoiseWidensTheIntervalAroundTheLargest) {
  auto fit = FitMemory(Points({8, 16, 24, 32, 48, 64}, 2 * kGiB, 48 * kMiB, 0, 30 * kMiB));
  ASSERT_TRUE(fit.has_value());
  const Capacity cap = LargestFitting(*fit, 40 * kGiB, 0);
  ASSERT_TRUE(cap.largest && cap.low && cap.high);
  EXPECT_LT(*cap.low, *cap.largest);
  EXPECT_GT(*cap.high, *cap.largest);
  EXPECT_NEAR(static_cast<double>(*cap.largest), (38.0 * 1024) / 48, 16) << "within 2 %";
}

TEST(SweepFit, QuadraticCapacityIsBelowTheLinearOne) {
  auto fit = FitMemory(Points({8, 16, 32, 64, 128}, 2 * kGiB, 48 * kMiB, 0.5 * kMiB));
  ASSERT_TRUE(fit.has_value());
  const Capacity cap = LargestFitting(*fit, 80 * kGiB, 0);
  ASSERT_TRUE(cap.largest.has_value());
  const double v = static_cast<double>(*cap.largest);
  EXPECT_LE(PredictBytes(*fit, v), 80 * kGiB);
  EXPECT_GT(PredictBytes(*fit, v + 1), 80 * kGiB);
}

TEST(SweepFit, MemoryThatDoesNotGrowSetsNoLimit) {
  auto fit = FitMemory({{8, kGiB}, {16, kGiB}, {32, kGiB}});
  ASSERT_TRUE(fit.has_value());
  const Capacity cap = LargestFitting(*fit, 80 * kGiB, 0.1);
  EXPECT_FALSE(cap.largest.has_value());
  EXPECT_NE(cap.note.find("does not grow"), std::string::npos);
}

TEST(SweepFit, EvenOneOverTheBudgetSaysSo) {
  auto fit = FitMemory({{8, 50 * kGiB}, {16, 60 * kGiB}});
  ASSERT_TRUE(fit.has_value());
  const Capacity cap = LargestFitting(*fit, 20 * kGiB, 0.1);
  EXPECT_FALSE(cap.largest.has_value());
  EXPECT_NE(cap.note.find("even 1"), std::string::npos) << cap.note;
}

TEST(SweepFit, StudentQuantiles) {
  EXPECT_DOUBLE_EQ(StudentT975(1), 12.706);
  EXPECT_DOUBLE_EQ(StudentT975(10), 2.228);
  EXPECT_DOUBLE_EQ(StudentT975(1000), 1.960);
  EXPECT_TRUE(std::isinf(StudentT975(0)));
}

}  // namespace
}  // namespace gpuwatch::sweep
