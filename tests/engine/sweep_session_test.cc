// Conclude on recorded runs: what goes into the fit.
#include "engine/sweep_session.h"

#include <gtest/gtest.h>

namespace gpuwatch::engine {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

sweep::RunRecord Fits(long value, double bytes) {
  sweep::RunRecord r;
  r.value = value;
  r.verdict = sweep::RunVerdict::kFits;
  r.peak_device_bytes = bytes;
  sweep::CopyRecord c;
  c.peak_process_bytes = bytes;
  r.copy.push_back(c);
  return r;
}

// The H200's ResNet-50: at bs 2968 and 3068 the caching allocator held the
// GPU full (136.0 GiB both): those runs say what the GPU holds, and stay out
// of the fit, which the four small runs make.
TEST(SweepConclude, RunsThatFilledTheGpuStayOutOfTheFit) {
  sweep::SweepResult s;
  s.total_bytes = s.free_bytes = 140.4 * kGiB;
  for (auto [v, gib] : std::vector<std::pair<long, double>>{
           {8, 1.445}, {16, 1.842}, {32, 2.617}, {64, 4.088}, {2968, 136.00}, {3068, 136.02}}) {
    s.runs.push_back(Fits(v, gib * kGiB));
  }
  Conclude(SweepPlan{}, s);
  ASSERT_TRUE(s.fit.has_value()) << s.fit_note;
  EXPECT_EQ(s.fit->points, 4);
  EXPECT_EQ(s.fit->model, sweep::MemoryFit::Model::kLinear) << s.fit->evidence;
}

// With fewer than 2 values left the full runs are all there is.
TEST(SweepConclude, FullRunsAreFittedWhenNothingElseIs) {
  sweep::SweepResult s;
  s.total_bytes = s.free_bytes = 80 * kGiB;
  s.runs = {Fits(8, 4 * kGiB), Fits(64, 78 * kGiB), Fits(72, 79 * kGiB)};
  Conclude(SweepPlan{}, s);
  ASSERT_TRUE(s.fit.has_value()) << s.fit_note;
  EXPECT_EQ(s.fit->points, 3);
}

}  // namespace
}  // namespace gpuwatch::engine
