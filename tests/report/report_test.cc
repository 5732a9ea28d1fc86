// The report's recorder (bucketing, aggregation, ordering, caps) and the
// page assembly (escaping, placeholders, writing). The page in a real
// browser is checked by tests/browser/check_report.mjs (ctest: report_browser_*).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../test_dir.h"
#include "report/report_html.h"
#include "report/report_recorder.h"

namespace gpuwatch::report {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
constexpr double kGiB = 1024.0 * 1024 * 1024;
const auto kT0 = std::chrono::system_clock::time_point(std::chrono::seconds(1795734000));

ProcessSample Process(std::uint32_t pid, double bytes, std::string command = "python train.py") {
  ProcessSample p;
  p.pid = pid;
  p.host.start_ticks = pid * 10;
  p.host.command = std::move(command);
  p.host.user = "alice";
  p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(bytes);
  return p;
}

DeviceSample Device(int index, double used, double util, double watts, double celsius) {
  DeviceSample d;
  d.index = index;
  d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  d.fields[FieldId::kUuid] = Reading::Text("GPU-" + std::to_string(index));
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(140 * kGiB);
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(used);
  d.fields[FieldId::kUtilizationGpuRatio] = Reading::Number(util);
  d.fields[FieldId::kPowerDrawWatts] = Reading::Number(watts);
  d.fields[FieldId::kTemperatureGpuCelsius] = Reading::Number(celsius);
  return d;
}

Snapshot At(milliseconds t, std::vector<DeviceSample> devices) {
  Snapshot s;
  s.time = kT0 + t;
  s.devices = std::move(devices);
  return s;
}

json Data(const ReportRecorder& r, std::vector<SummaryRow> rows = {}) {
  return r.ToJson({"title", "host", "run", ""}, rows, json());
}

TEST(ReportRecorder, OnePointPerSampleWhileFew) {
  ReportRecorder r;
  for (int i = 0; i < 10; ++i) {
    r.Observe(
        At(seconds(i), {Device(0, i * kGiB, 0.5, 300 + i, 60), Device(1, 2 * kGiB, 0, 80, 40)}));
  }
  const json d = Data(r);
  EXPECT_EQ(d["schema"], "gpuwatch.report/1");
  ASSERT_EQ(d["t"].size(), 10u);
  EXPECT_DOUBLE_EQ(d["t"][3].get<double>(), 1795734003.0);
  ASSERT_EQ(d["device_series"].size(), 2u);
  EXPECT_DOUBLE_EQ(d["device_series"][0]["memory_used_bytes"][7].get<double>(), 7 * kGiB);
  EXPECT_DOUBLE_EQ(d["device_series"][0]["utilization_percent"][7].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(d["device_series"][0]["power_watts"][7].get<double>(), 307.0);
  EXPECT_EQ(d["devices"][1]["uuid"], "GPU-1");
  EXPECT_DOUBLE_EQ(d["devices"][1]["memory_total_bytes"].get<double>(), 140 * kGiB);
  EXPECT_EQ(d["bucket_seconds"].get<double>(), 0.0);
  EXPECT_TRUE(d["demo"].is_null());
  EXPECT_DOUBLE_EQ(d["range"]["end"].get<double>() - d["range"]["start"].get<double>(), 9.0);
}

TEST(ReportRecorder, MissingReadingsAndLostDevicesAreGapsNotZeros) {
  ReportRecorder r;
  DeviceSample lost = Device(0, 5 * kGiB, 0.5, 300, 60);
  lost.health = DeviceHealth::kLost;
  DeviceSample no_temp = Device(0, 5 * kGiB, 0.5, 300, 60);
  no_temp.fields[FieldId::kTemperatureGpuCelsius] =
      Reading::Absent(Missing::kNotSupported, "no sensor");
  r.Observe(At(seconds(0), {Device(0, 5 * kGiB, 0.5, 300, 60)}));
  r.Observe(At(seconds(1), {lost}));
  r.Observe(At(seconds(2), {no_temp}));
  const json s = Data(r)["device_series"][0];
  EXPECT_TRUE(s["memory_used_bytes"][1].is_null());
  EXPECT_TRUE(s["utilization_percent"][1].is_null());
  EXPECT_FALSE(s["memory_used_bytes"][2].is_null());
  EXPECT_TRUE(s["temperature_celsius"][2].is_null());
}

TEST(ReportRecorder, StaysBoundedAndKeepsPeaksAndMeans) {
  ReportOptions o;
  o.max_points = 50;
  ReportRecorder r(o);
  // 10 000 samples at 100 ms; memory has one spike, utilization alternates 0/100 %.
  for (int i = 0; i < 10000; ++i) {
    const double used = i == 4321 ? 99 * kGiB : 10 * kGiB;
    r.Observe(At(milliseconds(100 * i), {Device(0, used, i % 2 ? 1.0 : 0.0, 200, 50)}));
  }
  EXPECT_LE(r.buckets(), 50u);
  EXPECT_GE(r.buckets(), 20u);
  EXPECT_GT(r.bucket_seconds(), 0.0);
  const json d = Data(r);
  ASSERT_EQ(d["t"].size(), r.buckets());
  double peak = 0;
  for (const auto& v : d["device_series"][0]["memory_used_bytes"])
    peak = std::max(peak, v.get<double>());
  EXPECT_DOUBLE_EQ(peak, 99 * kGiB);  // the spike survives every merge
  for (const auto& v : d["device_series"][0]["utilization_percent"])
    EXPECT_NEAR(v.get<double>(), 50.0, 2.0);  // means, not maxima
  // Times stay increasing.
  for (std::size_t i = 1; i < d["t"].size(); ++i) EXPECT_LT(d["t"][i - 1], d["t"][i]);
}

TEST(ReportRecorder, ProcessesJobFirstThenByPeakAndCapped) {
  ReportOptions o;
  o.max_processes = 3;
  ReportRecorder r(o);
  const std::set<std::uint32_t> job = {7};
  for (int i = 0; i < 5; ++i) {
    DeviceSample d = Device(0, 50 * kGiB, 0.5, 300, 60);
    d.processes = {Process(1, 1 * kGiB), Process(2, 30 * kGiB), Process(3, 20 * kGiB),
                   Process(4, 10 * kGiB), Process(7, (1 + i) * kGiB, "</script><b>x")};
    r.Observe(At(seconds(i), {d}), &job);
  }
  const json d = Data(r, {{"duration", "5s"}});
  ASSERT_EQ(d["process_series"].size(), 3u);
  EXPECT_EQ(d["process_series"][0]["pid"], 7);
  EXPECT_TRUE(d["process_series"][0]["job"].get<bool>());
  EXPECT_DOUBLE_EQ(d["process_series"][0]["memory_bytes"][4].get<double>(), 5 * kGiB);
  EXPECT_EQ(d["process_series"][1]["pid"], 2);
  EXPECT_EQ(d["process_series"][2]["pid"], 3);
  EXPECT_EQ(d["process_series"][1]["user"], "alice");
  ASSERT_EQ(d["summary"].size(), 2u);
  EXPECT_EQ(d["summary"][0][0], "duration");
  EXPECT_EQ(d["summary"][1][0], "not charted");
  EXPECT_NE(d["summary"][1][1].get<std::string>().find("2 more processes"), std::string::npos);
}

TEST(ReportRecorder, ProcessAbsentFromASampleIsAGap) {
  ReportRecorder r;
  DeviceSample with = Device(0, 5 * kGiB, 0.5, 300, 60);
  with.processes = {Process(9, kGiB)};
  r.Observe(At(seconds(0), {with}));
  r.Observe(At(seconds(1), {Device(0, 4 * kGiB, 0.5, 300, 60)}));
  r.Observe(At(seconds(2), {with}));
  const json m = Data(r)["process_series"][0]["memory_bytes"];
  EXPECT_FALSE(m[0].is_null());
  EXPECT_TRUE(m[1].is_null());
  EXPECT_FALSE(m[2].is_null());
}

TEST(ReportRecorder, FrameworkMemoryAndAnnotations) {
  ReportOptions o;
  o.max_step_marks = 3;
  ReportRecorder r(o);
  r.Observe(At(seconds(0), {Device(0, 5 * kGiB, 0.5, 300, 60)}));
  r.AddFramework(kT0 + seconds(0), 0, "torch", {{"allocated", 2 * kGiB}, {"reserved", 3 * kGiB}});
  r.Observe(At(seconds(1), {Device(0, 5 * kGiB, 0.5, 300, 60)}));
  Event alert;
  alert.time = kT0 + seconds(1);
  alert.kind = Event::Kind::kAlertFiring;
  alert.severity = Severity::kCritical;
  alert.gpu = 0;
  alert.message = "memory_high: GPU 0 at 95 %";
  r.AddEvent(alert);
  Event epoch;
  epoch.time = kT0 + seconds(1);
  epoch.kind = Event::Kind::kMark;
  epoch.source = "epoch";
  epoch.message = "epoch 1";
  r.AddEvent(epoch);
  const json d = Data(r);
  ASSERT_EQ(d["framework_series"].size(), 2u);
  EXPECT_EQ(d["framework_series"][0]["kind"], "allocated");
  ASSERT_EQ(d["t"].size(), 2u) << "a framework report joins the sample before it";
  EXPECT_DOUBLE_EQ(d["framework_series"][1]["memory_bytes"][0].get<double>(), 3 * kGiB);
  EXPECT_DOUBLE_EQ(d["framework_series"][1]["memory_bytes"][1].get<double>(), 3 * kGiB)
      << "a report holds until the next one";
  ASSERT_EQ(d["annotations"].size(), 2u);
  EXPECT_EQ(d["annotations"][0]["kind"], "alert");
  EXPECT_EQ(d["annotations"][0]["severity"], "critical");
  EXPECT_EQ(d["annotations"][0]["gpu"], 0);
  EXPECT_EQ(d["annotations"][1]["kind"], "mark");
  EXPECT_TRUE(d["annotations"][1]["gpu"].is_null());

  // Step marks are drawn while few, then only counted.
  Event step = epoch;
  step.source = "step";
  for (int i = 0; i < 3; ++i) r.AddEvent(step);
  EXPECT_EQ(Data(r)["annotations"].size(), 5u);
  r.AddEvent(step);
  const json many = Data(r);
  EXPECT_EQ(many["annotations"].size(), 2u);
  EXPECT_EQ(many["summary"].back()[0], "step marks");
}

TEST(ReportRecorder, ContinuationRowsJoinTheRowAbove) {
  ReportRecorder r;
  r.Observe(At(seconds(0), {Device(0, 5 * kGiB, 0.5, 300, 60)}));
  const json rows =
      Data(r, {{"GPU 0", "peak 5 GiB"}, {"", "starved 3s"}, {"leaks", "none"}})["summary"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][1], "peak 5 GiB\nstarved 3s");
  EXPECT_EQ(rows[1][0], "leaks");
}

TEST(ReportHtml, DataCannotCloseTheScriptAndTitleIsEscaped) {
  ASSERT_TRUE(CheckCanRender().ok()) << CheckCanRender().message();
  ReportRecorder r;
  DeviceSample d = Device(0, 5 * kGiB, 0.5, 300, 60);
  d.processes = {Process(9, kGiB, "evil </script><script>alert(1)</script> <!--")};
  r.Observe(At(seconds(0), {d}));
  json data = r.ToJson({"<title> & \"x\"", "host", "run", "demo.yaml"}, {}, json());
  auto page = RenderHtml(data);
  ASSERT_TRUE(page) << page.error().message();
  EXPECT_EQ(page->find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(page->find("<!--\""), std::string::npos);
  EXPECT_NE(page->find("evil \\u003c/script>\\u003cscript>alert(1)"), std::string::npos);
  EXPECT_NE(page->find("&lt;title&gt; &amp; &quot;x&quot;"), std::string::npos);
  EXPECT_EQ(page->find("/*gpuwatch:"), std::string::npos);
  EXPECT_EQ(page->find("{{title}}"), std::string::npos);
  // The data reads back from the page exactly.
  const auto start =
      page->find("id=\"gpuwatch-data\">") + std::string("id=\"gpuwatch-data\">").size();
  const auto end = page->find("</script>", start);
  const json back = json::parse(page->substr(start, end - start));
  EXPECT_EQ(back, data);
  // Nothing is fetched from anywhere.
  EXPECT_EQ(page->find("src=\"http"), std::string::npos);
  EXPECT_EQ(page->find("href=\"http"), std::string::npos);
}

TEST(ReportHtml, TextThatLooksLikeAPlaceholderIsJustText) {
  ReportRecorder r;
  r.Observe(At(seconds(0), {Device(0, 5 * kGiB, 0.5, 300, 60)}));
  auto page = RenderHtml(r.ToJson({"a /*gpuwatch:js*/ {{title}} /*gpuwatch:data*/", "h", "run", ""},
                                  {{"x", "/*gpuwatch:css*/"}}, json()));
  ASSERT_TRUE(page) << page.error().message();
  EXPECT_NE(page->find("<title>a /*gpuwatch:js*/ {{title}} /*gpuwatch:data*/</title>"),
            std::string::npos);
}

using ReportFiles = testing::TestDir;

TEST_F(ReportFiles, CheckWritableLeavesNoFileAndNamesTheProblem) {
  const auto fresh = dir_ / "r.html";
  EXPECT_TRUE(CheckWritable(fresh).ok());
  EXPECT_FALSE(std::filesystem::exists(fresh));
  { std::ofstream(dir_ / "old.html") << "keep"; }
  EXPECT_TRUE(CheckWritable(dir_ / "old.html").ok());
  std::stringstream kept;
  kept << std::ifstream(dir_ / "old.html").rdbuf();
  EXPECT_EQ(kept.str(), "keep");
  const Status bad = CheckWritable((dir_ / "no" / "such" / "dir.html").string());
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("no/such/dir.html"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("No such file"), std::string::npos) << bad.message();
}

TEST_F(ReportFiles, WriteIsAtomic) {
  const auto path = dir_ / "r.html";
  ASSERT_TRUE(WriteFileAtomically(path, "one").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "two").ok());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_EQ(text.str(), "two");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "r.html.tmp"));
  EXPECT_FALSE(WriteFileAtomically(dir_ / "missing" / "r.html", "x").ok());
}

}  // namespace
}  // namespace gpuwatch::report
