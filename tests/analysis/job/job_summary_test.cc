// The end-of-job summary: its leak verdict (what fired during the job, stated
// with pid, rate and forecast, also when it was cleared; "too short" when the
// job could not have had a verdict) and the wording of its rows.
#include "analysis/job/job_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

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

// Energy: the driver's counter where it advanced during the job; a job
// shorter than the counter's period (it reads the same value throughout)
// gets its power samples integrated instead of 0 J.
// A process sampled mid-exec or while exiting has no command line ("[comm]");
// the summary names it by the newest one read, as `run`'s summary shows it.
TEST(JobSummary, AProcessIsNamedByItsNewestCommandLine) {
  JobSummary summary({"sh", "-c", "exec sleep 30"}, kT0);
  const auto seen = [&](int t, const std::string& name, const std::string& command) {
    Snapshot s = At(seconds(t));
    s.devices[0].processes[0].host.name = name;
    s.devices[0].processes[0].host.command = command;
    summary.Observe(s, {42});
  };
  seen(0, "sleep", "[sleep]");  // the exec under way
  seen(1, "sh", "sh -c exec sleep 30");
  seen(2, "sleep", "sleep 30");
  seen(3, "sleep", "[sleep]");  // exiting
  const JobReport r = summary.Finish(kT0 + seconds(3), 0, {}, {});
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_EQ(r.processes[0].command, "sleep 30");

  JobSummary never({"true"}, kT0);
  Snapshot s = At(seconds(0));
  s.devices[0].processes[0].host.name = "sleep";
  s.devices[0].processes[0].host.command = "[sleep]";
  never.Observe(s, {42});
  EXPECT_EQ(never.Finish(kT0, 0, {}, {}).processes.at(0).command, "[sleep]")
      << "no command line ever read: its name";
}

TEST(JobSummary, EnergyComesFromTheCounterOrFromPowerWhenTheCounterDidNotMove) {
  const auto job = [](bool counter_moves) {
    JobSummary summary({"python", "train.py"}, kT0);
    for (int t = 0; t <= 3; ++t) {
      Snapshot s = At(seconds(t));
      s.devices[0].fields[FieldId::kPowerDrawWatts] = Reading::Number(500);
      s.devices[0].fields[FieldId::kEnergyJoules] =
          Reading::Number(1e6 + (counter_moves ? 480.0 * t : 0));
      summary.Observe(s, {42});
    }
    return summary.Finish(kT0 + seconds(3), 0, {}, {});
  };
  EXPECT_DOUBLE_EQ(job(true).energy_joules.at(0), 1440) << "the counter: 3 s at 480 W";
  EXPECT_DOUBLE_EQ(job(false).energy_joules.at(0), 1500) << "the power samples: 3 s at 500 W";
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

// One worker after another on a GPU: the first's last report leaves the sum
// once it is gone from the GPU.
TEST(JobSummary, FrameworkMemoryOfAProcessThatEndedLeavesTheSum) {
  JobSummary summary({"python", "eval.py"}, kT0);
  constexpr double kG = 1024.0 * 1024 * 1024;
  summary.Observe(At(seconds(0)), {42});
  summary.AddFrameworkMemory(0, "torch", {{"allocated", 10 * kG}}, 42u);
  Snapshot next = At(seconds(1));
  next.devices[0].processes[0].pid = 43;  // 42 ended, 43 started
  summary.Observe(next, {43});
  summary.AddFrameworkMemory(0, "torch", {{"allocated", 8 * kG}}, 43u);
  const auto j = JobReportToJson(summary.Finish(kT0 + seconds(2), 0, {}, {}))["framework_memory"];
  EXPECT_EQ(j["0"]["peak"]["allocated"], 10 * kG) << j;
  EXPECT_EQ(j["0"]["last"]["allocated"], 8 * kG) << j;
  EXPECT_EQ(j["0"]["processes"], 1) << j;
}

// A rank that leaked until it ended (its process left the GPU with the
// verdict standing) did not "stop": the summary says its process ended.
TEST(JobSummary, ALeakClearedBecauseItsProcessEndedSaysSo) {
  JobSummary summary({"torchrun", "train.py"}, kT0);
  for (seconds t{0}; t <= seconds(30); t += seconds(1)) summary.Observe(At(t), {42});
  summary.AddEvent(LeakEvent(Event::Kind::kLeakSuspected, seconds(20), 42,
                             "torch allocated memory of pid 42 grows 16.0 MiB per step"));
  Snapshot gone = At(seconds(31));
  gone.devices[0].processes.clear();
  summary.Observe(gone, {});
  summary.AddEvent(LeakEvent(Event::Kind::kLeakCleared, seconds(31), 42,
                             "pid 42 ended while suspected of leaking"));
  const JobReport r = summary.Finish(kT0 + seconds(32), 0, {}, {});
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_TRUE(r.leaks[0].cleared);
  EXPECT_TRUE(r.leaks[0].ended);
  EXPECT_NE(Rows(r).find("(until its process ended)"), std::string::npos) << Rows(r);
  EXPECT_EQ(Rows(r).find("(then stopped)"), std::string::npos) << Rows(r);
  EXPECT_EQ(JobReportToJson(r)["leaks"][0]["process_ended"], true);
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

bool HasRow(const std::vector<SummaryRow>& rows, const std::string& label,
            const std::string& value) {
  return std::any_of(rows.begin(), rows.end(),
                     [&](const SummaryRow& r) { return r.label == label && r.value == value; });
}

TEST(JobSummary, AlertsAndDiagnosesAreRowsOfTheirOwnEachWithItsEvents) {
  Event alert;
  alert.kind = Event::Kind::kAlertFiring;
  alert.source = "memory_high";
  alert.message = "GPU 0 memory above 90 %";
  Event diagnosis;
  diagnosis.kind = Event::Kind::kDiagnosis;
  diagnosis.source = "starved";
  diagnosis.message = "GPU 0 waits for its input";
  const JobReport r = Summarize(seconds(10), {diagnosis, alert, diagnosis});
  const std::vector<SummaryRow> rows = JobReportRows(r);
  const auto at = [&](const std::string& label) {
    return std::find_if(rows.begin(), rows.end(),
                        [&](const SummaryRow& row) { return row.label == label; });
  };
  ASSERT_NE(at("alerts"), rows.end()) << Rows(r);
  ASSERT_NE(at("diagnoses"), rows.end()) << Rows(r);
  EXPECT_EQ(at("alerts")->value, "1");
  EXPECT_EQ(at("diagnoses")->value, "2");
  EXPECT_EQ((at("alerts") + 1)->value, "- memory_high: GPU 0 memory above 90 %");
  EXPECT_EQ((at("diagnoses") + 1)->value, "- starved: GPU 0 waits for its input");
  EXPECT_EQ((at("diagnoses") + 2)->value, "- starved: GPU 0 waits for its input");
  const std::string text = RenderJobReport(r);
  EXPECT_NE(text.find("\nalerts       1\n  "), std::string::npos) << text;
  EXPECT_NE(text.find("\ndiagnoses    2\n  "), std::string::npos) << text;
}

TEST(JobSummary, FrameworkCountersAreNamedOncePlainly) {
  JobSummary summary({"python", "train.py"}, kT0);
  summary.Observe(At(seconds(0)), {42});
  constexpr double kG = 1024.0 * 1024 * 1024;
  summary.AddFrameworkMemory(0, "torch", {{"allocated", 1.0 * kG}, {"reserved", 1.5 * kG}});
  // torch's own high-water mark saw a spike between two reports.
  summary.AddFrameworkMemory(
      0, "torch", {{"allocated", 0.5 * kG}, {"peak_allocated", 1.25 * kG}, {"reserved", 2 * kG}});
  const JobReport r = summary.Finish(kT0 + seconds(1), 0, {}, {});
  EXPECT_TRUE(HasRow(JobReportRows(r), "framework",
                     "GPU 0 torch: peak allocated 1.25 GiB, peak reserved 2.00 GiB"))
      << Rows(r);
  EXPECT_EQ(Rows(r).find("peak peak"), std::string::npos) << Rows(r);
  EXPECT_EQ(JobReportToJson(r)["framework_memory"]["0"]["peak"]["peak_allocated"], 1.25 * kG)
      << "the JSON keeps the counters as reported";
}

// Two ranks on one GPU, each reporting its own allocator: the GPU's figure is
// their sum as of each one's latest report, and its peak that sum's highest.
TEST(JobSummary, FrameworkMemoryOfProcessesSharingAGpuIsSummed) {
  JobSummary summary({"torchrun", "train.py"}, kT0);
  summary.Observe(At(seconds(0)), {101, 102, 103});  // the job's processes
  constexpr double kG = 1024.0 * 1024 * 1024;
  summary.AddFrameworkMemory(0, "torch", {{"allocated", 1.0 * kG}}, 101u);
  summary.AddFrameworkMemory(0, "torch", {{"allocated", 2.0 * kG}}, 102u);
  summary.AddFrameworkMemory(0, "torch", {{"allocated", 1.5 * kG}}, 101u);  // 3.5 together
  summary.AddFrameworkMemory(0, "torch", {{"allocated", 0.5 * kG}}, 102u);  // 2.0 together
  summary.AddFrameworkMemory(1, "torch", {{"allocated", 4.0 * kG}}, 103u);  // another GPU
  const JobReport r = summary.Finish(kT0 + seconds(1), 0, {}, {});
  const auto j = JobReportToJson(r)["framework_memory"];
  EXPECT_EQ(j["0"]["last"]["allocated"], 2.0 * kG);
  EXPECT_EQ(j["0"]["peak"]["allocated"], 3.5 * kG);
  EXPECT_EQ(j["0"]["processes"], 2);
  EXPECT_EQ(j["1"]["peak"]["allocated"], 4.0 * kG);
  EXPECT_EQ(j["1"]["processes"], 1);
  EXPECT_TRUE(HasRow(JobReportRows(r), "framework",
                     "GPU 0 torch (2 processes, summed): peak allocated 3.50 GiB"))
      << Rows(r);
  EXPECT_TRUE(HasRow(JobReportRows(r), "framework", "GPU 1 torch: peak allocated 4.00 GiB"))
      << Rows(r);
}

TEST(JobSummary, AJobsMemoryIsTheJobs) {
  const std::vector<SummaryRow> rows = JobReportRows(Summarize(seconds(5), {}));
  EXPECT_TRUE(HasRow(rows, "job memory", "peak 19.00 GiB over all its processes"))
      << Rows(Summarize(seconds(5), {}));
}

TEST(JobSummary, AWholeMachinesRecordingSpeaksOfProcessesNeverOfAJob) {
  JobSummary summary({}, kT0, /*every_device=*/true);
  for (seconds t{0}; t <= seconds(5); t += seconds(1)) {
    Snapshot s = At(t);
    s.devices.push_back(s.devices[0]);
    s.devices[1].index = 1;
    s.devices[1].processes[0].pid = 43;
    s.devices[1].processes.push_back(s.devices[0].processes[0]);  // pid 42 on both GPUs
    summary.Observe(s, {42, 43});
  }
  const JobReport r = summary.Finish(kT0 + seconds(5), std::nullopt, {}, {});
  const std::vector<SummaryRow> rows = JobReportRows(r);
  EXPECT_TRUE(HasRow(rows, "processes", "peak memory 57.00 GiB together (2 processes)")) << Rows(r);
  for (const SummaryRow& row : rows) {
    EXPECT_EQ((row.label + " " + row.value).find("job"), std::string::npos) << Rows(r);
  }
  JobSummary empty({}, kT0, /*every_device=*/true);
  const std::string none = Rows(empty.Finish(kT0, std::nullopt, {}, {}));
  EXPECT_NE(none.find("GPUs none: the recording holds no GPU sample"), std::string::npos) << none;
  EXPECT_EQ(none.find("job"), std::string::npos) << none;
}

TEST(JobSummary, TheJobsEnvironmentIsInTheJson) {
  JobReport r = Summarize(seconds(1), {});
  EXPECT_TRUE(JobReportToJson(r)["environment"].empty());
  r.environment = {{"GPUWATCH_SOCKET", "/run/gpuwatch/job.sock"}};
  EXPECT_EQ(JobReportToJson(r)["environment"]["GPUWATCH_SOCKET"], "/run/gpuwatch/job.sock");
}

}  // namespace
}  // namespace gpuwatch
