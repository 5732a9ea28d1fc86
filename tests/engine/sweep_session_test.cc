// Conclude on recorded runs: what goes into the fit.
#include "engine/sweep_session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

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

// A run of a job that reports its allocator: NVML's `process` GiB hold
// `reserved`, of which allocated + inactive split cannot be given back.
sweep::RunRecord Reported(long value, double process, double allocated, double reserved,
                          std::optional<double> split) {
  sweep::RunRecord r = Fits(value, process * kGiB);
  r.copy[0].framework_allocated_bytes = allocated * kGiB;
  r.copy[0].framework_reserved_bytes = reserved * kGiB;
  if (split) r.copy[0].framework_inactive_split_bytes = *split * kGiB;
  return r;
}

// The H200's ResNet-50 (2026-12-04): NVML's memory holds torch's cache,
// 9-12 % over allocated, which the allocator frees short of memory. The fit
// is of what the runs need: the NVML memory less that cache.
TEST(SweepConclude, TheFitIsOfWhatRunsNeedWhenEveryRunSaysIt) {
  sweep::SweepResult s;
  s.total_bytes = s.free_bytes = 140.4 * kGiB;
  s.runs = {Reported(8, 1.45, 0.67, 0.71, 0.02), Reported(16, 1.84, 0.99, 1.10, 0.03),
            Reported(344, 17.20, 14.67, 16.46, 0.30), Reported(736, 35.0, 31.4, 34.3, 0.5)};
  Conclude(SweepPlan{}, s);
  ASSERT_TRUE(s.fit.has_value()) << s.fit_note;
  EXPECT_TRUE(s.fit_of_needed);
  ASSERT_TRUE(s.runs[2].PeakNeededBytes().has_value());
  // 17.20 - (16.46 - 14.67 - 0.30)
  EXPECT_NEAR(*s.runs[2].PeakNeededBytes() / kGiB, 15.71, 1e-9);
  EXPECT_NEAR(sweep::PredictBytes(*s.fit, 736) / kGiB, 35.0 - (34.3 - 31.4 - 0.5), 0.1);
  const auto lines = sweep::VerdictLines(s);
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("memory fitted: NVML's less the cache") == 0;
  })) << ::testing::PrintToString(lines);
  EXPECT_EQ(sweep::SweepToJson(s)["fit"]["measure"], "needed");

  // A run that did not say its inactive split memory: NVML's memory for all.
  s.runs[1] = Reported(16, 1.84, 0.99, 1.10, std::nullopt);
  Conclude(SweepPlan{}, s);
  ASSERT_TRUE(s.fit.has_value()) << s.fit_note;
  EXPECT_FALSE(s.fit_of_needed);
  EXPECT_NEAR(sweep::PredictBytes(*s.fit, 736) / kGiB, 35.0, 0.1);
  EXPECT_EQ(sweep::SweepToJson(s)["fit"]["measure"], "process");
  EXPECT_TRUE(sweep::SweepToJson(s)["runs"][1]["needed_memory_bytes"].is_null());
}

// Never more than NVML saw, never less than nothing.
TEST(SweepConclude, NeededMemoryStaysBetweenNothingAndNvmlsMemory) {
  sweep::CopyRecord c;
  c.peak_process_bytes = 10 * kGiB;
  c.framework_allocated_bytes = 8 * kGiB;
  c.framework_reserved_bytes = 9 * kGiB;
  c.framework_inactive_split_bytes = 2 * kGiB;  // more than reserved - allocated
  EXPECT_EQ(sweep::NeededBytes(c), 10 * kGiB);
  c.framework_inactive_split_bytes = 0;
  c.framework_reserved_bytes = 30 * kGiB;  // peaks of other moments
  EXPECT_EQ(sweep::NeededBytes(c), 0);
  c.framework_allocated_bytes.reset();
  EXPECT_FALSE(sweep::NeededBytes(c).has_value());
}

}  // namespace
}  // namespace gpuwatch::engine
