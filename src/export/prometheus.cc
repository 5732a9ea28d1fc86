#include "export/prometheus.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "export/metrics_compat.h"

namespace gpuwatch {
namespace {

using metrics::Labels;
using metrics::Type;
using metrics::Writer;

std::string Text(const Reading& r) { return r.is_text() ? r.text() : std::string(); }

std::optional<double> Value(const Reading& r) {
  if (r.is_number() && std::isfinite(r.number())) return r.number();
  return std::nullopt;
}

Labels DeviceLabels(const DeviceSample& d, const std::string& hostname) {
  return {{"gpu", std::to_string(d.index)},
          {"uuid", Text(d.fields[FieldId::kUuid])},
          {"pci_bus_id", Text(d.fields[FieldId::kPciBusId])},
          {"model", Text(d.fields[FieldId::kName])},
          {"hostname", hostname}};
}

Type TypeOf(const FieldInfo& f) { return f.kind == Kind::kCounter ? Type::kCounter : Type::kGauge; }

void AddDevice(Writer& w, const DeviceSample& d, const std::string& hostname,
               const MetricsOptions& o) {
  const Labels labels = DeviceLabels(d, hostname);
  w.Add("gpuwatch_gpu_up", Type::kGauge,
        "1 when the GPU answers, 0 when it is lost, failing or not answering (see gpuwatch doctor)",
        labels, d.health == DeviceHealth::kOk ? 1 : 0);
  Labels info = labels;
  for (FieldId id : {FieldId::kSerial, FieldId::kVbiosVersion, FieldId::kComputeCapability}) {
    info.emplace_back(Info(id).key, Text(d.fields[id]));
  }
  w.Add("gpuwatch_gpu_info", Type::kInfo, "Static facts of a GPU as labels", info, 1);
  if (d.health != DeviceHealth::kOk) return;  // a lost or hung GPU's values would be stale
  for (const auto& f : Catalogue()) {
    if (f.scope != Scope::kDevice || f.prom_name.empty() || f.kind == Kind::kInfo) continue;
    if (auto v = Value(d.fields[f.id])) w.Add(f.prom_name, TypeOf(f), f.help, labels, *v);
  }
  if (o.process_metrics) {
    for (const auto& p : d.processes) {
      Labels pl = {{"gpu", std::to_string(d.index)},
                   {"uuid", Text(d.fields[FieldId::kUuid])},
                   {"hostname", hostname},
                   {"pid", std::to_string(p.pid)},
                   {"command", (p.host.name.empty() ? p.host.command : p.host.name).substr(0, 64)}};
      if (o.process_user) pl.emplace_back("user", p.host.user);
      // From the process's cgroup and, on Kubernetes, the kubelet's names (as
      // dcgm-exporter labels them); "" (no label) when it has none.
      pl.emplace_back("container_id", p.host.container_id);
      pl.emplace_back("pod_uid", p.host.pod_uid);
      pl.emplace_back("pod", p.host.pod);
      pl.emplace_back("namespace", p.host.pod_namespace);
      pl.emplace_back("container", p.host.container_name);
      pl.emplace_back("slurm_job_id", p.host.slurm_job_id);
      for (const auto& f : Catalogue()) {
        if (f.scope != Scope::kProcess || f.prom_name.empty() || f.kind == Kind::kInfo) continue;
        if (auto v = Value(p.fields[f.id])) w.Add(f.prom_name, TypeOf(f), f.help, pl, *v);
      }
    }
  }
}

// A MIG device: its own families (gpuwatch_mig_*, so that sums over
// gpuwatch_* count each GPU once), labelled with its parent GPU and instance.
Labels MigLabels(const DeviceSample& m, const DeviceSample* parent, const std::string& hostname) {
  Labels labels = DeviceLabels(m, hostname);
  if (parent != nullptr) {
    labels[2].second = Text(parent->fields[FieldId::kPciBusId]);  // pci_bus_id: the parent's
  }
  labels.emplace_back("gpu_instance",
                      m.gpu_instance_id ? std::to_string(*m.gpu_instance_id) : std::string());
  labels.emplace_back("compute_instance", m.compute_instance_id
                                              ? std::to_string(*m.compute_instance_id)
                                              : std::string());
  return labels;
}

const DeviceSample* Parent(const Snapshot& s, const DeviceSample& m) {
  const auto parent = std::find_if(s.devices.begin(), s.devices.end(),
                                   [&](const DeviceSample& d) { return d.index == m.index; });
  return parent != s.devices.end() ? &*parent : nullptr;
}

void AddMig(Writer& w, const DeviceSample& m, const DeviceSample* parent,
            const std::string& hostname) {
  const Labels labels = MigLabels(m, parent, hostname);
  w.Add("gpuwatch_mig_info", Type::kInfo, "A MIG device and the GPU it is part of", labels, 1);
  if (m.health != DeviceHealth::kOk) return;
  for (const auto& f : Catalogue()) {
    if (f.scope != Scope::kDevice || f.prom_name.empty() || f.kind == Kind::kInfo) continue;
    auto v = Value(m.fields[f.id]);
    if (!v) continue;
    w.Add(fmt::format("gpuwatch_mig_{}", f.prom_name.substr(std::string_view("gpuwatch_").size())),
          TypeOf(f), f.help, labels, *v);
  }
}

// At most `max` bytes of `text`, not cutting a UTF-8 character in two.
std::string CutUtf8(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

// Who holds each GPU and MIG device (1/0), who waits, and with
// process_metrics who holds what (only for the devices of this snapshot, so
// every gpuwatch_lease_info has its *_leased 1).
void AddLeaseSeries(Writer& w, const Snapshot* s, const host::LeaseTable& t, const MetricsInput& in,
                    const MetricsOptions& o) {
  std::vector<std::pair<const DeviceSample*, const host::Lease*>> leased;
  if (s != nullptr) {
    for (const auto& d : s->devices) {
      const host::Lease* l = t.Find(Text(d.fields[FieldId::kUuid]));
      w.Add("gpuwatch_gpu_leased", Type::kGauge,
            "1 while a job holds the GPU through a lease (select --lease, run --gpus auto:N)",
            DeviceLabels(d, in.hostname), l != nullptr ? 1 : 0);
      if (l != nullptr) leased.emplace_back(&d, l);
    }
    for (const auto& m : s->mig_devices) {
      const host::Lease* l = t.Find(Text(m.fields[FieldId::kUuid]));
      w.Add("gpuwatch_mig_leased", Type::kGauge,
            "1 while a job holds the MIG device through a lease (select --lease, run --gpus "
            "auto:N)",
            MigLabels(m, Parent(*s, m), in.hostname), l != nullptr ? 1 : 0);
      if (l != nullptr) leased.emplace_back(&m, l);
    }
  }
  if (o.process_metrics) {
    for (const auto& [d, l] : leased) {
      Labels labels = {{"gpu", std::to_string(d->index)},
                       {"uuid", l->uuid},
                       {"hostname", in.hostname},
                       {"device", l->device},
                       {"pid", l->holders.empty() ? "" : std::to_string(l->holders.front().pid)},
                       {"command", CutUtf8(l->command, 64)},
                       {"ticket", std::to_string(l->ticket)}};
      if (o.process_user) labels.emplace_back("user", l->user);
      w.Add("gpuwatch_lease_info", Type::kInfo,
            "Who holds a leased GPU or MIG device: the first holder's pid, command and ticket "
            "(--process-metrics; user with --process-user)",
            labels, 1);
    }
  }
  const Labels host = {{"hostname", in.hostname}};
  w.Add("gpuwatch_lease_queue_length", Type::kGauge,
        "Jobs waiting for GPUs (run --gpus auto:N --wait)", host,
        static_cast<double>(t.queue.size()));
  double oldest = 0;
  for (const host::Waiter& waiter : t.queue) {
    oldest = std::max(oldest, std::chrono::duration<double>(in.now - waiter.since).count());
  }
  w.Add("gpuwatch_lease_queue_wait_seconds", Type::kGauge,
        "How long the longest-waiting job has waited for GPUs (0 when none waits)", host, oldest);
}

// gpuwatch_diagnosis_active: one family for every diagnosis (src/analysis/
// diagnoses). Starved and throttling: every GPU that answers, 0 or 1;
// preallocation: one series per diagnosed process while it runs.
void AddDiagnoses(Writer& w, const Snapshot& s, const MetricsInput& in) {
  constexpr std::string_view kHelp =
      "1 while a diagnosis stands (kind starved: low utilization while memory is held; "
      "throttling: clocks held down for a minute or more; preallocation: per process); "
      "docs/metrics.md";
  for (const auto& d : s.devices) {
    if (d.health != DeviceHealth::kOk) continue;
    for (std::string_view kind : {"starved", "throttling"}) {
      const bool standing = std::any_of(
          in.diagnoses.begin(), in.diagnoses.end(),
          [&](const StandingDiagnosis& x) { return x.gpu == d.index && x.kind == kind; });
      w.Add("gpuwatch_diagnosis_active", Type::kGauge, kHelp,
            {{"gpu", std::to_string(d.index)},
             {"kind", std::string(kind)},
             {"pid", ""},
             {"hostname", in.hostname}},
            standing ? 1 : 0);
    }
  }
  for (const auto& a : in.preallocated) {
    w.Add("gpuwatch_diagnosis_active", Type::kGauge, kHelp,
          {{"gpu", std::to_string(a.gpu)},
           {"kind", "preallocation"},
           {"pid", std::to_string(a.process.pid)},
           {"hostname", in.hostname}},
          1);
  }
}

}  // namespace

MetricsFormat NegotiateMetricsFormat(std::string_view accept) {
  return accept.find("application/openmetrics-text") != std::string_view::npos
             ? MetricsFormat::kOpenMetrics
             : MetricsFormat::kPrometheus;
}

std::string_view MetricsContentType(MetricsFormat format) {
  return format == MetricsFormat::kOpenMetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

std::string RenderPublishedMetrics(const MetricsInput& in, const MetricsOptions& o) {
  Writer w(o.format);
  const Labels host = {{"hostname", in.hostname}};
  if (in.snapshot != nullptr) {
    const Snapshot& s = *in.snapshot;
    for (const auto& f : Catalogue()) {
      if (f.scope != Scope::kHost || f.prom_name.empty() || f.kind == Kind::kInfo) continue;
      if (auto v = Value(s.host[f.id])) w.Add(f.prom_name, TypeOf(f), f.help, host, *v);
    }
    w.Add("gpuwatch_driver_info", Type::kInfo,
          "The NVIDIA driver as labels: its version, the highest CUDA version it supports, NVML's "
          "version (empty when not read)",
          {{"driver_version", Text(s.host[FieldId::kDriverVersion])},
           {"cuda_version", Text(s.host[FieldId::kCudaDriverVersion])},
           {"nvml_version", Text(s.host[FieldId::kNvmlVersion])},
           {"hostname", in.hostname}},
          1);
    for (const auto& d : s.devices) AddDevice(w, d, in.hostname, o);
    for (const auto& m : s.mig_devices) AddMig(w, m, Parent(s, m), in.hostname);
  }

  // One series per (rule, severity, GPU), however many processes it fired for.
  std::set<std::tuple<std::string, std::string, int>> alerts;
  for (const auto& a : in.alerts)
    alerts.emplace(a.rule, std::string(SeverityName(a.severity)), a.gpu);
  for (const auto& [rule, severity, gpu] : alerts) {
    w.Add("gpuwatch_alert_active", Type::kGauge, "1 while an alert rule is firing (docs/rules.md)",
          {{"rule", rule},
           {"severity", severity},
           {"gpu", std::to_string(gpu)},
           {"hostname", in.hostname}},
          1);
  }
  for (const auto& r : in.leaks) {
    const bool framework = !r.subject.framework.empty();
    const bool device = !r.subject.process && !framework;
    // Processes and framework series only while something stands.
    if (!device && !r.estimate.suspected && !r.estimate.forecast) continue;
    Labels l = {{"gpu", std::to_string(r.subject.gpu)},
                {"scope", framework ? "framework"
                          : device  ? "device"
                                    : "process"},
                {"pid", r.subject.process ? std::to_string(r.subject.process->pid) : ""},
                {"hostname", in.hostname}};
    w.Add("gpuwatch_leak_suspected", Type::kGauge,
          "1 while the leak detector suspects growing memory (docs/leaks.md)", l,
          r.estimate.suspected ? 1 : 0);
    w.Add("gpuwatch_oom_forecast", Type::kGauge,
          "1 while memory grows fast enough to fill the GPU soon, before a leak verdict "
          "(docs/leaks.md)",
          l, r.estimate.forecast ? 1 : 0);
    if (r.estimate.enough_evidence) {
      w.Add("gpuwatch_leak_rate_bytes_per_second", Type::kGauge,
            "Growth of the memory floor (Theil-Sen slope)", l, r.estimate.rate_bytes_per_s);
    }
    if (device && r.time_to_full) {
      w.Add("gpuwatch_time_to_oom_seconds", Type::kGauge,
            "Time until the GPU's memory is full at its floor's growth rate",
            {{"gpu", std::to_string(r.subject.gpu)}, {"hostname", in.hostname}},
            static_cast<double>(r.time_to_full->count()));
    }
  }

  for (const auto& a : in.preallocated) {
    w.Add("gpuwatch_process_preallocated", Type::kGauge,
          "1 while a process that took >= 70 % of the GPU at start and stayed flat runs "
          "(TensorFlow/JAX pre-allocation: NVML's figure is not its real use; docs/leaks.md)",
          {{"gpu", std::to_string(a.gpu)},
           {"pid", std::to_string(a.process.pid)},
           {"hostname", in.hostname}},
          1);
  }

  if (in.snapshot != nullptr) AddDiagnoses(w, *in.snapshot, in);

  // The exporter's own counters that change with a sample, not with a scrape.
  if (in.snapshot != nullptr) {
    w.Add("gpuwatch_exporter_sample_duration_seconds", Type::kGauge,
          "How long reading the last snapshot took", host,
          std::chrono::duration<double>(in.snapshot->sample_duration).count());
  }
  std::uint64_t nvml_failures = 0;
  for (const auto& [call, count] : in.nvml_errors) nvml_failures += count;
  w.Add("gpuwatch_exporter_nvml_failures_total", Type::kCounter,
        "Failed NVML calls (not 'not supported') of every call, from 0 at the first sample: what "
        "increase() alerts on (per call: gpuwatch_exporter_nvml_errors_total)",
        host, static_cast<double>(nvml_failures));
  for (const auto& [call, count] : in.nvml_errors) {
    w.Add("gpuwatch_exporter_nvml_errors_total", Type::kCounter,
          "Failed NVML calls (not 'not supported'), by call",
          {{"call", call}, {"hostname", in.hostname}}, static_cast<double>(count));
  }

  if (o.process_metrics) {
    for (const ProcessFrameworkMemory& f : in.framework) {
      for (const auto& [kind, bytes] : f.bytes) {
        w.Add(
            "gpuwatch_framework_memory_bytes", Type::kGauge,
            "Memory a process's framework reports (allocated, reserved, ...), over serve --socket",
            {{"gpu", std::to_string(f.gpu)},
             {"hostname", in.hostname},
             {"pid", std::to_string(f.pid)},
             {"framework", f.framework},
             {"kind", kind}},
            bytes);
      }
    }
  }
  if (o.dcgm_compat && in.snapshot != nullptr) metrics::AddDcgm(w, *in.snapshot, in.hostname);
  if (o.nvidia_smi_compat && in.snapshot != nullptr) {
    metrics::AddNvidiaSmi(w, *in.snapshot, o.process_metrics);
  }
  return w.Families();
}

std::string RenderLiveMetrics(const MetricsInput& in, const MetricsOptions& o) {
  Writer w(o.format);
  const Labels host = {{"hostname", in.hostname}};
  if (in.leases) AddLeaseSeries(w, in.snapshot, *in.leases, in, o);
  const ExporterStats& st = in.stats;
  w.Add("gpuwatch_exporter_build_info", Type::kInfo, "The gpuwatch build",
        {{"version", st.version}, {"hostname", in.hostname}}, 1);
  w.Add("gpuwatch_exporter_scrapes_total", Type::kCounter, "Scrapes of /metrics served", host,
        static_cast<double>(st.scrapes));
  if (in.snapshot != nullptr) {
    w.Add("gpuwatch_exporter_last_sample_age_seconds", Type::kGauge,
          "Age of the snapshot these metrics describe", host, st.last_sample_age_seconds);
  }
  w.Add("gpuwatch_exporter_sampler_hung", Type::kGauge,
        "1 while no GPU answers (a driver call hangs) and the last good snapshot is served; "
        "one hung GPU among others that answer is its gpuwatch_gpu_up 0",
        host, st.sampler_hung ? 1 : 0);
  w.Add("gpuwatch_exporter_http_shed_total", Type::kCounter,
        "Connections answered without a worker because all were busy (503; probes answered)", host,
        static_cast<double>(st.http_shed));
  w.Add("gpuwatch_exporter_http_deadline_cuts_total", Type::kCounter,
        "Connections cut because their request did not arrive whole within the deadline", host,
        static_cast<double>(st.http_deadline_cuts));
  w.Add("gpuwatch_exporter_http_oversize_cuts_total", Type::kCounter,
        "Connections cut because their request head passed the size bound (431)", host,
        static_cast<double>(st.http_oversize_cuts));
  return w.Finish();
}

std::string RenderMetrics(const MetricsInput& in, const MetricsOptions& o) {
  return RenderPublishedMetrics(in, o) + RenderLiveMetrics(in, o);
}

}  // namespace gpuwatch
