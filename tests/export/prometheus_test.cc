// /metrics rendering: the golden text on a fixed scenario read through the
// real NVML backend and the fake library, content negotiation, OpenMetrics
// framing, opt-in process series, dcgm-exporter names and units, alerts and
// leak gauges, label escaping. promtool and a real Prometheus check the same
// output in tests/integration/.
#include "export/prometheus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "../backends/fake_env.h"
#include "sampler/collect.h"

namespace gpuwatch {
namespace {

namespace fs = std::filesystem;

Snapshot Fixed() {
  auto backend = testing::OpenFake("fixed.yaml", 100);
  host::ProcOptions po;
  po.proc_dir = std::string(GPUWATCH_SOURCE_DIR) + "/scenarios/test/fixed.host/proc";
  po.is_host_proc = true;
  host::ProcessResolver resolver(po);
  return CollectOnce(*backend, &resolver, CollectOptions{});
}

std::string Render(const Snapshot& s, MetricsOptions o, MetricsInput in = {}) {
  in.snapshot = &s;
  in.hostname = "node1";
  in.stats.version = "0.1.0";
  in.stats.scrapes = 3;
  in.stats.last_sample_age_seconds = 0.25;
  in.stats.sample_duration_seconds = 0.002;
  return RenderMetrics(in, o);
}

void Golden(const std::string& name, const std::string& actual) {
  const fs::path path = fs::path(GPUWATCH_SOURCE_DIR) / "tests" / "golden" / name;
  if (std::getenv("GPUWATCH_UPDATE_GOLDEN") != nullptr) std::ofstream(path) << actual;
  std::stringstream expected;
  expected << std::ifstream(path).rdbuf();
  ASSERT_TRUE(fs::exists(path)) << "missing " << path << "; run with GPUWATCH_UPDATE_GOLDEN=1";
  EXPECT_EQ(expected.str(), actual) << "golden " << name << " differs";
}

TEST(Metrics, GoldenOnTheFixedScenario) {
  const Snapshot s = Fixed();
  Golden("metrics_fixed.prom", Render(s, {}));
  MetricsOptions om;
  om.format = MetricsFormat::kOpenMetrics;
  Golden("metrics_fixed.openmetrics", Render(s, om));
}

TEST(Metrics, NegotiatesTheFormat) {
  EXPECT_EQ(NegotiateMetricsFormat(""), MetricsFormat::kPrometheus);
  EXPECT_EQ(NegotiateMetricsFormat("text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            MetricsFormat::kPrometheus);
  EXPECT_EQ(NegotiateMetricsFormat("application/openmetrics-text;version=1.0.0,text/plain;q=0.5"),
            MetricsFormat::kOpenMetrics);
  EXPECT_EQ(MetricsContentType(MetricsFormat::kPrometheus),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(MetricsContentType(MetricsFormat::kOpenMetrics),
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

TEST(Metrics, OpenMetricsNamesCounterFamiliesWithoutTotalAndEndsWithEof) {
  const Snapshot s = Fixed();
  MetricsOptions om;
  om.format = MetricsFormat::kOpenMetrics;
  const std::string text = Render(s, om);
  EXPECT_TRUE(text.ends_with("# EOF\n"));
  EXPECT_NE(text.find("# TYPE gpuwatch_energy_joules counter\n"), std::string::npos);
  EXPECT_NE(text.find("\ngpuwatch_energy_joules_total{"), std::string::npos);
  EXPECT_NE(text.find("# TYPE gpuwatch_gpu info\n"), std::string::npos);
  const std::string plain = Render(s, {});
  EXPECT_EQ(plain.find("# EOF"), std::string::npos);
  EXPECT_NE(plain.find("# TYPE gpuwatch_energy_joules_total counter\n"), std::string::npos);
}

TEST(Metrics, ProcessSeriesAreOptInAndUserIsOptInAgain) {
  const Snapshot s = Fixed();
  EXPECT_EQ(Render(s, {}).find("gpuwatch_process_"), std::string::npos);
  MetricsOptions with;
  with.process_metrics = true;
  const std::string text = Render(s, with);
  EXPECT_NE(text.find("gpuwatch_process_memory_used_bytes{"), std::string::npos);
  EXPECT_NE(text.find("pid=\""), std::string::npos);
  EXPECT_EQ(text.find("user=\""), std::string::npos);
  with.process_user = true;
  EXPECT_NE(Render(s, with).find("user=\""), std::string::npos);
}

TEST(Metrics, DcgmCompatUsesDcgmNamesAndUnits) {
  const Snapshot s = Fixed();
  MetricsOptions o;
  o.dcgm_compat = true;
  const std::string text = Render(s, o);
  const double used = s.devices[0].fields[FieldId::kMemoryUsedBytes].number();
  const double util = s.devices[0].fields[FieldId::kUtilizationGpuRatio].number();
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(text, m, std::regex("DCGM_FI_DEV_FB_USED\\{gpu=\"0\"[^}]*\\} (\\S+)")));
  EXPECT_DOUBLE_EQ(std::stod(m[1]), used / (1024 * 1024)) << "MiB";
  ASSERT_TRUE(
      std::regex_search(text, m, std::regex("DCGM_FI_DEV_GPU_UTIL\\{gpu=\"0\"[^}]*\\} (\\S+)")));
  EXPECT_DOUBLE_EQ(std::stod(m[1]), util * 100) << "percent";
  EXPECT_NE(text.find("modelName=\"NVIDIA H200\""), std::string::npos);
  EXPECT_NE(text.find("Hostname=\"node1\""), std::string::npos);
  EXPECT_NE(text.find("gpuwatch_memory_used_bytes{"), std::string::npos) << "gpuwatch's own stay";
}

TEST(Metrics, AlertsLeaksAndEscaping) {
  Snapshot s = Fixed();
  MetricsInput in;
  rules::ActiveAlert a;
  a.rule = "gpu_temperature_high";
  a.severity = Severity::kWarning;
  a.gpu = 1;
  in.alerts = {a, a};  // two processes, one series
  leaks::LeakReport device;
  device.subject.gpu = 0;
  device.estimate.suspected = true;
  device.estimate.enough_evidence = true;
  device.estimate.rate_bytes_per_s = 1024;
  device.time_to_full = std::chrono::seconds(3600);
  leaks::LeakReport quiet_process;
  quiet_process.subject = {1, ProcessKey{42, 1}, {}};
  in.leaks = {device, quiet_process};
  s.devices[0].fields[FieldId::kName] = Reading::Text("odd \"name\"\\\n");
  const std::string text = Render(s, {}, in);
  std::size_t count = 0;
  for (auto at = text.find("gpuwatch_alert_active{"); at != std::string::npos;
       at = text.find("gpuwatch_alert_active{", at + 1))
    ++count;
  EXPECT_EQ(count, 1u);
  EXPECT_NE(text.find("gpuwatch_alert_active{rule=\"gpu_temperature_high\",severity=\"warning\","
                      "gpu=\"1\",hostname=\"node1\"} 1"),
            std::string::npos);
  EXPECT_NE(
      text.find(
          "gpuwatch_leak_suspected{gpu=\"0\",scope=\"device\",pid=\"\",hostname=\"node1\"} 1"),
      std::string::npos);
  EXPECT_NE(text.find("gpuwatch_leak_rate_bytes_per_second{gpu=\"0\""), std::string::npos);
  EXPECT_NE(text.find("gpuwatch_time_to_oom_seconds{gpu=\"0\",hostname=\"node1\"} 3600"),
            std::string::npos);
  EXPECT_EQ(text.find("pid=\"42\""), std::string::npos) << "a process not suspected has no series";
  EXPECT_NE(text.find("model=\"odd \\\"name\\\"\\\\\\n\""), std::string::npos)
      << text.substr(0, 2000);
}

TEST(Metrics, ForecastsAndPreallocationHaveSeriesWhileTheyStand) {
  const Snapshot s = Fixed();
  MetricsInput in;
  leaks::LeakReport device;
  device.subject.gpu = 0;
  device.estimate.forecast = true;
  device.time_to_full = std::chrono::seconds(360);
  leaks::LeakReport process;
  process.subject = {0, ProcessKey{42, 1}, {}};
  process.estimate.forecast = true;
  leaks::LeakReport torch;
  torch.subject = {0, ProcessKey{42, 1}, "torch"};
  torch.estimate.suspected = true;
  in.leaks = {device, process, torch};
  in.preallocated = {Preallocation{1, ProcessKey{77, 3}, 100.0, 0.75}};
  const std::string text = Render(s, {}, in);
  EXPECT_NE(
      text.find("gpuwatch_oom_forecast{gpu=\"0\",scope=\"device\",pid=\"\",hostname=\"node1\"} 1"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "gpuwatch_oom_forecast{gpu=\"0\",scope=\"process\",pid=\"42\",hostname=\"node1\"} 1"),
      std::string::npos);
  EXPECT_NE(
      text.find(
          "gpuwatch_leak_suspected{gpu=\"0\",scope=\"framework\",pid=\"42\",hostname=\"node1\"} 1"),
      std::string::npos);
  EXPECT_NE(text.find("gpuwatch_time_to_oom_seconds{gpu=\"0\",hostname=\"node1\"} 360"),
            std::string::npos);
  EXPECT_NE(text.find("gpuwatch_process_preallocated{gpu=\"1\",pid=\"77\",hostname=\"node1\"} 1"),
            std::string::npos);
}

TEST(Metrics, MigDevicesHaveTheirOwnFamiliesLabelledWithTheirInstance) {
  auto backend = testing::OpenFake("mig.yaml", 100);
  const Snapshot s = CollectOnce(*backend, nullptr, CollectOptions{});
  ASSERT_EQ(s.mig_devices.size(), 2u);
  const std::string text = Render(s, {});
  EXPECT_NE(
      text.find("gpuwatch_mig_info{gpu=\"0\",uuid=\"MIG-11111111-2222-3333-4444-555555555555\","),
      std::string::npos)
      << text;
  const std::string mig1 =
      "gpuwatch_mig_memory_used_bytes{gpu=\"0\",uuid=\"MIG-11111111-2222-3333-4444-555555555555\"";
  const auto at = text.find(mig1);
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at, text.find('\n', at) - at);
  EXPECT_NE(line.find("gpu_instance=\"1\",compute_instance=\"0\""), std::string::npos) << line;
  EXPECT_NE(line.find("pci_bus_id=\"" + s.devices[0].fields[FieldId::kPciBusId].text() + "\""),
            std::string::npos)
      << "the parent's bus: " << line;
  EXPECT_NE(text.find("gpuwatch_mig_memory_used_bytes{gpu=\"0\",uuid=\"MIG-66666666"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE gpuwatch_mig_memory_used_bytes gauge"), std::string::npos);
  // The parent GPU stays in gpuwatch_memory_used_bytes, once.
  EXPECT_NE(text.find("gpuwatch_memory_used_bytes{gpu=\"0\",uuid=\"GPU-"), std::string::npos);
  EXPECT_EQ(text.find("gpuwatch_memory_used_bytes{gpu=\"0\",uuid=\"MIG-"), std::string::npos);
}

TEST(Metrics, LostGpuIsDownWithoutStaleValues) {
  Snapshot s = Fixed();
  s.devices[1].health = DeviceHealth::kLost;
  const std::string text = Render(s, {});
  EXPECT_NE(text.find("gpuwatch_gpu_up{gpu=\"1\""), std::string::npos);
  EXPECT_NE(text.find("gpuwatch_gpu_up{gpu=\"0\""), std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex("gpuwatch_gpu_up\\{gpu=\"1\"[^}]*\\} (\\S+)")));
  EXPECT_EQ(m[1], "0");
  EXPECT_FALSE(std::regex_search(text, std::regex("gpuwatch_memory_used_bytes\\{gpu=\"1\"")));
}

TEST(Metrics, BeforeTheFirstSampleOnlyTheExporterSpeaks) {
  MetricsInput in;
  in.hostname = "node1";
  const std::string text = RenderMetrics(in, {});
  EXPECT_EQ(text.find("gpuwatch_memory"), std::string::npos);
  EXPECT_NE(text.find("gpuwatch_exporter_scrapes_total{hostname=\"node1\"} 0"), std::string::npos);
}

}  // namespace
}  // namespace gpuwatch
