// /metrics rendering: the golden text on a fixed scenario read through the
// real NVML backend and the fake library, content negotiation, OpenMetrics
// framing, opt-in process series, alerts and leak gauges, label escaping
// (the compatibility families: metrics_compat_test.cc). promtool and a real
// Prometheus check the same output in tests/integration/.
#include "export/prometheus.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "metrics_test_util.h"

namespace gpuwatch {
namespace {

using namespace metrics_test;

namespace fs = std::filesystem;

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

TEST(Metrics, OpenMetricsDeclaresTheUnitOfEveryFamilyNamedWithOne) {
  const Snapshot s = Fixed();
  MetricsOptions om;
  om.format = MetricsFormat::kOpenMetrics;
  const std::string text = Render(s, om);
  EXPECT_NE(text.find("# TYPE gpuwatch_memory_used_bytes gauge\n# UNIT gpuwatch_memory_used_bytes "
                      "bytes\n"),
            std::string::npos);
  EXPECT_NE(text.find("# UNIT gpuwatch_energy_joules joules\n"), std::string::npos)
      << "a counter's unit is its family's, without _total";
  EXPECT_NE(text.find("# UNIT gpuwatch_pcie_tx_bytes_per_second bytes_per_second\n"),
            std::string::npos);
  EXPECT_NE(text.find("# UNIT gpuwatch_temperature_celsius celsius\n"), std::string::npos);
  EXPECT_EQ(text.find("# UNIT gpuwatch_gpu_up"), std::string::npos);
  // The spec's rule: a UNIT names the end of its family's name.
  std::istringstream in(text);
  int units = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("# UNIT ")) continue;
    ++units;
    const auto space = line.rfind(' ');
    const std::string family = line.substr(7, space - 7);
    EXPECT_TRUE(family.ends_with("_" + line.substr(space + 1))) << line;
  }
  EXPECT_GT(units, 20);
  EXPECT_EQ(Render(s, {}).find("# UNIT"), std::string::npos) << "text 0.0.4 has no UNIT";
}

TEST(Metrics, DriverInfoCarriesDriverCudaAndNvmlVersions) {
  const Snapshot s = Fixed();
  const auto info = Samples(Render(s, {}), "gpuwatch_driver_info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0], fmt::format("gpuwatch_driver_info{{driver_version=\"{}\",cuda_version=\"{}\","
                                 "nvml_version=\"{}\",hostname=\"node1\"}} 1",
                                 s.host[FieldId::kDriverVersion].text(),
                                 s.host[FieldId::kCudaDriverVersion].text(),
                                 s.host[FieldId::kNvmlVersion].text()));
  MetricsOptions om;
  om.format = MetricsFormat::kOpenMetrics;
  EXPECT_NE(Render(s, om).find("# TYPE gpuwatch_driver info\n"), std::string::npos);
}

TEST(Metrics, CountersOfKnownLabelsAreZeroFromTheFirstScrape) {
  const Snapshot s = Fixed();
  const std::string text = Render(s, {});
  EXPECT_EQ(
      Samples(text, "gpuwatch_exporter_nvml_failures_total"),
      std::vector<std::string>{"gpuwatch_exporter_nvml_failures_total{hostname=\"node1\"} 0"});
  EXPECT_TRUE(Samples(text, "gpuwatch_exporter_nvml_errors_total").empty())
      << "per call: the calls the daemon names (none here), each from 0";
  for (const char* counter :
       {"gpuwatch_exporter_http_shed_total", "gpuwatch_exporter_http_deadline_cuts_total",
        "gpuwatch_exporter_http_oversize_cuts_total"}) {
    EXPECT_EQ(Samples(text, counter),
              std::vector<std::string>{std::string(counter) + "{hostname=\"node1\"} 0"});
  }
  EXPECT_EQ(Samples(text, "gpuwatch_xid_errors_total").size(), 2u) << "every GPU, from 0";
  MetricsInput in;
  in.nvml_errors = {{"nvmlDeviceGetPowerUsage", 2}, {"nvmlDeviceGetTemperature", 1}};
  const std::string failing = Render(s, {}, in);
  EXPECT_EQ(
      Samples(failing, "gpuwatch_exporter_nvml_failures_total"),
      std::vector<std::string>{"gpuwatch_exporter_nvml_failures_total{hostname=\"node1\"} 3"});
  EXPECT_EQ(Samples(failing, "gpuwatch_exporter_nvml_errors_total").size(), 2u);
}

TEST(Metrics, EveryDiagnosisHasASeries) {
  const Snapshot s = Fixed();
  MetricsInput in;
  in.diagnoses = {StandingDiagnosis{.gpu = 1, .kind = "starved"},
                  StandingDiagnosis{.gpu = 0, .kind = "throttling"}};
  in.preallocated = {Preallocation{1, ProcessKey{77, 3}, 100.0, 0.75}};
  const auto series = Samples(Render(s, {}, in), "gpuwatch_diagnosis_active");
  const std::vector<std::string> expected = {
      R"(gpuwatch_diagnosis_active{gpu="0",kind="starved",pid="",hostname="node1"} 0)",
      R"(gpuwatch_diagnosis_active{gpu="0",kind="throttling",pid="",hostname="node1"} 1)",
      R"(gpuwatch_diagnosis_active{gpu="1",kind="starved",pid="",hostname="node1"} 1)",
      R"(gpuwatch_diagnosis_active{gpu="1",kind="throttling",pid="",hostname="node1"} 0)",
      R"(gpuwatch_diagnosis_active{gpu="1",kind="preallocation",pid="77",hostname="node1"} 1)"};
  EXPECT_EQ(series, expected);
}

TEST(Metrics, ProcessSeriesCarryContainerPodAndJobFromTheCgroup) {
  const Snapshot s = Fixed();
  MetricsOptions o;
  o.process_metrics = true;
  const std::string text = Render(s, o);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      text, m, std::regex("gpuwatch_process_memory_used_bytes\\{[^}]*pid=\"5001\"[^}]*\\}")));
  EXPECT_NE(
      m.str().find(
          "container_id=\"4b8e2f0c1d9a7e6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b\""),
      std::string::npos)
      << m.str();
  ASSERT_TRUE(std::regex_search(
      text, m, std::regex("gpuwatch_process_memory_used_bytes\\{[^}]*pid=\"5002\"[^}]*\\}")));
  EXPECT_NE(m.str().find("slurm_job_id=\"4242\""), std::string::npos) << m.str();
  EXPECT_NE(m.str().find("container_id=\"\""), std::string::npos) << m.str();
  EXPECT_EQ(text.find("user=\""), std::string::npos) << "still opt-in";
}

}  // namespace
}  // namespace gpuwatch
