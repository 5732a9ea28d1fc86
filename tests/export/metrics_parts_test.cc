// /metrics' two parts (export/prometheus.h): the published part a server
// caches per sample and the live part it renders per scrape. Together they
// are the document; their families are disjoint (a family split across them
// would be written twice); and the published part reads nothing that
// changes between scrapes.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "../backends/fake_env.h"
#include "export/prometheus.h"
#include "sampler/collect.h"

namespace gpuwatch {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;

const system_clock::time_point kPartsNow = system_clock::time_point(seconds(1796033018));

Snapshot FixedWithoutHost() {
  auto backend = testing::OpenFake("fixed.yaml", 100);
  return CollectOnce(*backend, nullptr, CollectOptions{});
}

// Every option and input that writes a family of its own.
MetricsInput Rich(const Snapshot& s) {
  MetricsInput in;
  in.snapshot = &s;
  in.hostname = "node1";
  rules::ActiveAlert alert;
  alert.rule = "memory_high";
  in.alerts = {alert};
  leaks::LeakReport leak;
  leak.subject.gpu = 0;
  leak.estimate.suspected = true;
  leak.estimate.enough_evidence = true;
  leak.estimate.rate_bytes_per_s = 1e6;
  leak.time_to_full = seconds(600);
  in.leaks = {leak};
  ProcessFrameworkMemory torch;
  torch.pid = 4242;
  torch.framework = "torch";
  torch.bytes = {{"allocated", 1e9}, {"reserved", 2e9}};
  in.framework = {torch};
  in.stats.version = "test";
  in.stats.scrapes = 5;
  in.nvml_errors = {{"nvmlDeviceGetPowerUsage", 2}};
  host::LeaseTable leases;
  host::Lease lease;
  lease.uuid = "GPU-ba5eb01e-1a44-0730-738a-4f10e71191a1";
  lease.holders = {{4242, 1}};
  lease.ticket = 3;
  leases.leases = {lease};
  host::Waiter waiter;
  waiter.ticket = 4;
  waiter.since = kPartsNow - seconds(30);
  leases.queue = {waiter};
  in.leases = leases;
  in.now = kPartsNow;
  return in;
}

MetricsOptions Everything(MetricsFormat format) {
  MetricsOptions o;
  o.format = format;
  o.process_metrics = o.process_user = o.dcgm_compat = o.nvidia_smi_compat = true;
  return o;
}

std::set<std::string> Families(const std::string& text) {
  std::set<std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("# TYPE ")) continue;
    const std::string rest = line.substr(7);
    out.insert(rest.substr(0, rest.find(' ')));
  }
  return out;
}

TEST(MetricsParts, TogetherTheyAreTheDocumentAndTheirFamiliesAreDisjoint) {
  const Snapshot s = FixedWithoutHost();
  for (MetricsFormat format : {MetricsFormat::kPrometheus, MetricsFormat::kOpenMetrics}) {
    const MetricsInput in = Rich(s);
    const MetricsOptions o = Everything(format);
    const std::string published = RenderPublishedMetrics(in, o);
    const std::string live = RenderLiveMetrics(in, o);
    EXPECT_EQ(RenderMetrics(in, o), published + live);
    const auto a = Families(published), b = Families(live);
    EXPECT_GT(a.size(), 50u);
    EXPECT_TRUE(a.contains("gpuwatch_alert_active") && a.contains("gpuwatch_leak_suspected"));
    EXPECT_TRUE(b.contains("gpuwatch_lease_queue_wait_seconds"));
    // Counted once a sample, so rendered once a sample.
    for (const char* series :
         {"gpuwatch_exporter_nvml_errors_total{", "gpuwatch_exporter_sample_duration_seconds{"}) {
      EXPECT_NE(published.find(series), std::string::npos) << series;
      EXPECT_EQ(live.find(series), std::string::npos) << series;
    }
    for (const auto& f : b) EXPECT_FALSE(a.contains(f)) << f << " is in both parts";
    if (format == MetricsFormat::kOpenMetrics) {
      EXPECT_EQ(published.find("# EOF"), std::string::npos);
      EXPECT_TRUE(live.ends_with("# EOF\n"));
    }
  }
}

TEST(MetricsParts, ThePublishedPartReadsNothingThatChangesBetweenScrapes) {
  const Snapshot s = FixedWithoutHost();
  const MetricsOptions o = Everything(MetricsFormat::kPrometheus);
  const MetricsInput first = Rich(s);
  MetricsInput later = first;
  later.stats.scrapes = 6;
  later.stats.last_sample_age_seconds = 0.9;
  later.stats.http_shed = 1;
  later.stats.sampler_hung = true;
  later.leases->leases.clear();
  later.now = kPartsNow + seconds(10);
  EXPECT_EQ(RenderPublishedMetrics(first, o), RenderPublishedMetrics(later, o));
  EXPECT_NE(RenderLiveMetrics(first, o), RenderLiveMetrics(later, o));
}

}  // namespace
}  // namespace gpuwatch
