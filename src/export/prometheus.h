// /metrics: the last snapshot (and the analysis state beside it) as
// Prometheus text 0.0.4 or OpenMetrics 1.0. Metric names, units and help come
// from the field catalogue; nothing here calls NVML. Pure, so a scrape costs a
// serialization and nothing else. docs/metrics.md lists every series.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diagnoses/diagnoses.h"
#include "analysis/job/framework_table.h"
#include "analysis/leaks/leak_tracker.h"
#include "analysis/rules/engine.h"
#include "export/metrics_writer.h"
#include "gpuwatch/snapshot.h"
#include "host/leases.h"

namespace gpuwatch {

// OpenMetrics when the Accept header asks for it, else Prometheus text.
MetricsFormat NegotiateMetricsFormat(std::string_view accept);
std::string_view MetricsContentType(MetricsFormat format);

struct MetricsOptions {
  MetricsFormat format = MetricsFormat::kPrometheus;
  bool process_metrics = false;    // per-process series (pid, command, container/pod/job ids)
  bool process_user = false;       // ... with the user label too
  bool dcgm_compat = false;        // also dcgm-exporter's names and units
  bool nvidia_smi_compat = false;  // also nvidia_gpu_exporter's nvidia_smi_* names
};

// The exporter's own health.
struct ExporterStats {
  std::uint64_t scrapes = 0;
  double last_sample_age_seconds = 0;
  bool sampler_hung = false;
  std::uint64_t http_shed = 0;           // connections answered without a worker (503, probes)
  std::uint64_t http_deadline_cuts = 0;  // connections cut at the request deadline
  std::uint64_t http_oversize_cuts = 0;  // ... for a request head over the size bound
  std::string version;
};

struct MetricsInput {
  const Snapshot* snapshot = nullptr;  // nullptr before the first sample
  std::string hostname;
  std::vector<rules::ActiveAlert> alerts;
  std::vector<leaks::LeakReport> leaks;
  std::vector<ProcessFrameworkMemory> framework;  // per process: shown with process_metrics
  std::vector<Preallocation> preallocated;
  // GPUs with a standing starved or throttling diagnosis (Diagnoser::Standing).
  std::vector<StandingDiagnosis> diagnoses;
  // Failed NVML calls by call, counted up to the snapshot (every call a
  // sample makes, from 0).
  std::map<std::string, std::uint64_t> nvml_errors;
  ExporterStats stats;
  // The machine's leases (docs/select.md); nullopt when not read (no lease
  // series). Waits are counted to `now`.
  std::optional<host::LeaseTable> leases;
  std::chrono::system_clock::time_point now;
};

// /metrics in two parts whose families are disjoint, so that a server renders
// the first once per sample and only the second per scrape:
//  - what one publication holds (the snapshot, alerts, leaks, diagnoses,
//    framework memory, the NVML error counters, the sample's duration, the
//    compatibility families): everything but `stats`, `leases` and `now`;
//    no OpenMetrics `# EOF`;
//  - what changes between scrapes: the lease series (the file as this
//    request read it, waits counted to `now`) and the exporter's own
//    counters of scrapes, connections and the sample's age; it ends the
//    document (`# EOF` in OpenMetrics).
std::string RenderPublishedMetrics(const MetricsInput& input, const MetricsOptions& options);
std::string RenderLiveMetrics(const MetricsInput& input, const MetricsOptions& options);
// The whole document: the two parts, one after the other.
std::string RenderMetrics(const MetricsInput& input, const MetricsOptions& options);

}  // namespace gpuwatch
