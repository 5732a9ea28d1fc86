// The end-of-job summary's leak verdict: what fired during the job, stated
// with pid, rate and forecast, also when it was cleared; "too short" when the
// job could not have had a verdict.
#include "analysis/job/job_summary.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuwatch {
namespace {

using std::chrono::seconds;
const auto kT0 = std::chrono::system_clock::time_point(seconds(1795734000));

Snapshot At(seconds t) {
  Snapshot s;
  s.time = kT0 + t;
  DeviceSample d;
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(140.0 * (1 << 30));
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(20.0 * (1 << 30));
  ProcessSample p;
  p.pid = 42;
  p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(19.0 * (1 << 30));
  d.processes.push_back(p);
  s.devices.push_back(d);
  return s;
}

Event LeakEvent(Event::Kind kind, seconds t, std::optional<std::uint32_t> pid,
                std::string message) {
  Event e;
  e.time = kT0 + t;
  e.kind = kind;
  e.source = "leak";
  e.gpu = 0;
  if (pid) e.process = ProcessKey{*pid, 7};
  e.value = 100.0 * 1024 * 1024;
  e.time_to_full = seconds(1200);
  e.message = std::move(message);
  return e;
}

JobReport Summarize(seconds sampled, const std::vector<Event>& events) {
  JobSummary summary({"python", "train.py"}, kT0);
  for (seconds t{0}; t <= sampled; t += seconds(1)) summary.Observe(At(t), {42});
  for (const Event& e : events) summary.AddEvent(e);
  return summary.Finish(kT0 + sampled, 0, {}, {});
}

std::string Rows(const JobReport& r) {
  std::string out;
  for (const auto& row : JobReportRows(r)) out += row.label + " " + row.value + "\n";
  return out;
}

TEST(JobSummary, AJobTooShortForAVerdictSaysSoNotNoLeak) {
  const JobReport r = Summarize(seconds(40), {});
  EXPECT_EQ(r.leak_verdict.rfind("too short for a leak verdict: 40.0s of samples", 0), 0u)
      << r.leak_verdict;
  EXPECT_TRUE(r.leaks.empty());
  EXPECT_EQ(JobReportToJson(r)["sampled_seconds"], 40.0);
}

TEST(JobSummary, AnUnmonitoredJobSaysSoInsteadOfClaimingNoGpu) {
  JobReport r = JobSummary({"python", "train.py"}, kT0).Finish(kT0 + seconds(5), 3, {}, {});
  EXPECT_NE(Rows(r).find("GPUs none: no process of the job used a GPU"), std::string::npos);
  EXPECT_TRUE(JobReportToJson(r)["unmonitored"].is_null());
  r.unmonitored = "NVIDIA driver not loaded.";
  const std::string rows = Rows(r);
  EXPECT_NE(rows.find("GPUs not monitored: NVIDIA driver not loaded.\n"), std::string::npos)
      << rows;
  EXPECT_EQ(rows.find("no process of the job used a GPU"), std::string::npos) << rows;
  EXPECT_EQ(rows.find("job memory"), std::string::npos) << "nothing was measured: " << rows;
  EXPECT_EQ(JobReportToJson(r)["unmonitored"], "NVIDIA driver not loaded.");
}

TEST(JobSummary, ALongQuietJobHasNoLeakSuspected) {
  const JobReport r = Summarize(seconds(900), {});
  EXPECT_EQ(r.leak_verdict, "no leak suspected");
}

TEST(JobSummary, AForecastDuringTheJobIsStatedWithItsPidRateAndTimeToFull) {
  const JobReport r =
      Summarize(seconds(100),
                {LeakEvent(Event::Kind::kOomForecast, seconds(60), 42,
                           "pid 42 on GPU 0: memory grows 100 MiB/min: GPU 0 full in ~20 min")});
  EXPECT_EQ(r.leak_verdict.rfind("out-of-memory forecast: pid 42 on GPU 0", 0), 0u)
      << r.leak_verdict;
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].pid, 42u);
  EXPECT_FALSE(r.leaks[0].verdict);
  EXPECT_FALSE(r.leaks[0].cleared);
  const auto j = JobReportToJson(r)["leaks"][0];
  EXPECT_EQ(j["kind"], "oom_forecast");
  EXPECT_EQ(j["pid"], 42);
  EXPECT_EQ(j["rate_bytes_per_second"], 100.0 * 1024 * 1024);
  EXPECT_EQ(j["time_to_full_seconds"], 1200);
  EXPECT_EQ(j["standing"], true);
  EXPECT_NE(Rows(r).find("still growing at the end"), std::string::npos) << Rows(r);
}

TEST(JobSummary, AVerdictOutranksTheForecastBeforeItAndStaysAfterItClears) {
  const JobReport r =
      Summarize(seconds(1200),
                {LeakEvent(Event::Kind::kOomForecast, seconds(60), 42, "pid 42 forecast"),
                 LeakEvent(Event::Kind::kLeakSuspected, seconds(700), 42,
                           "pid 42 on GPU 0 leaks 100 MiB/min"),
                 LeakEvent(Event::Kind::kOomForecast, seconds(800), 42, "pid 42 later forecast"),
                 LeakEvent(Event::Kind::kLeakCleared, seconds(1100), 42, "pid 42 ended")});
  EXPECT_EQ(r.leak_verdict, "leak suspected: pid 42 on GPU 0 leaks 100 MiB/min");
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_TRUE(r.leaks[0].verdict);
  EXPECT_TRUE(r.leaks[0].cleared);
  EXPECT_NE(Rows(r).find("1 leak suspected"), std::string::npos) << Rows(r);
  EXPECT_NE(Rows(r).find("(then stopped)"), std::string::npos) << Rows(r);
}

TEST(JobSummary, TheDeviceAndEachProcessAreSeparateFindings) {
  JobSummary summary({"job"}, kT0);
  for (seconds t{0}; t <= seconds(100); t += seconds(1)) {
    Snapshot s = At(t);
    ProcessSample other = s.devices[0].processes[0];
    other.pid = 43;
    s.devices[0].processes.push_back(other);
    summary.Observe(s, {42, 43});
  }
  for (const Event& e : {LeakEvent(Event::Kind::kOomForecast, seconds(50), std::nullopt, "GPU 0"),
                         LeakEvent(Event::Kind::kOomForecast, seconds(55), 42, "pid 42"),
                         LeakEvent(Event::Kind::kLeakSuspected, seconds(60), 43, "pid 43")}) {
    summary.AddEvent(e);
  }
  const JobReport r = summary.Finish(kT0 + seconds(100), 0, {}, {});
  ASSERT_EQ(r.leaks.size(), 3u);
  EXPECT_EQ(r.leak_verdict, "leak suspected: pid 43");
  EXPECT_NE(Rows(r).find("1 leak suspected, 2 out-of-memory forecasts"), std::string::npos)
      << Rows(r);
}

TEST(JobSummary, LeaksOfOtherJobsAreNotTheJobs) {
  const JobReport r =
      Summarize(seconds(100), {LeakEvent(Event::Kind::kOomForecast, seconds(50), 99, "pid 99"),
                               LeakEvent(Event::Kind::kLeakSuspected, seconds(60), 42, "pid 42")});
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].pid, 42u);
}

TEST(JobSummary, TheVerdictSpanDecidesWhatIsTooShort) {
  JobSummary summary({"job"}, kT0);
  summary.SetLeakVerdictSpan(seconds(30));
  for (seconds t{0}; t <= seconds(40); t += seconds(1)) summary.Observe(At(t), {42});
  EXPECT_EQ(summary.Finish(kT0 + seconds(40), 0, {}, {}).leak_verdict, "no leak suspected");
}

}  // namespace
}  // namespace gpuwatch
