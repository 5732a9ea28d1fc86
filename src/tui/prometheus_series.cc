// The series side of `top --prometheus`: the fleet built from the parsed
// /api/v1/query answers (prometheus_fleet.h). Pure.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "tui/prometheus_fleet.h"

namespace gpuwatch::tui {
namespace {

using Labels = std::map<std::string, std::string>;
using Clock = std::chrono::system_clock;
constexpr int kStaleIntervals = 4;
constexpr std::chrono::seconds kStaleFloor{5};

const std::string& Label(const Labels& l, const std::string& key) {
  static const std::string kNone;
  auto it = l.find(key);
  return it == l.end() ? kNone : it->second;
}

// The catalogue rows by Prometheus name (every row that has one).
const FieldInfo* FieldByPromName(std::string_view name) {
  static const std::map<std::string_view, const FieldInfo*> kByName = [] {
    std::map<std::string_view, const FieldInfo*> m;
    for (const FieldInfo& f : Catalogue()) {
      if (!f.prom_name.empty() && f.kind != Kind::kInfo) m.emplace(f.prom_name, &f);
    }
    return m;
  }();
  auto it = kByName.find(name);
  return it == kByName.end() ? nullptr : it->second;
}

double ToSeconds(Clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

struct DeviceBuild {
  DeviceSample sample;
  std::map<std::uint32_t, ProcessSample> processes;
};

// What the answers say of one host, before it becomes a HostState.
struct HostBuild {
  std::string hostname;
  std::set<std::pair<std::string, std::string>> targets;  // (instance, job)
  double samples = 0;                                     // of B in kSeenWindow
  bool live = false;                                      // has series in `values`
  bool known = false;                                     // has series in `values` or `last_values`
  std::optional<double> age_s;                            // of its newest sample, at evaluation
  std::optional<Clock::time_point> sampled;               // its newest sample
  HostFields host;
  std::map<int, DeviceBuild> devices;
  std::map<std::tuple<int, long, long, std::string>, DeviceSample> migs;
  std::optional<double> hung, sample_age_s, sample_duration_s;
  std::map<std::tuple<std::string, int, std::string>, rules::ActiveAlert> alerts;
  std::map<std::tuple<int, std::string, std::string>, leaks::LeakReport> leaks;
  std::map<int, double> time_to_oom_s;
  std::set<std::pair<int, std::uint32_t>> preallocated;
  std::map<std::tuple<int, std::uint32_t, std::string>, ProcessFrameworkMemory> framework;
  std::optional<host::LeaseTable> leases;
};

std::string HostKey(const Labels& l) {
  const std::string& h = Label(l, "hostname");
  return h.empty() ? Label(l, "instance") : h;
}

// The identity labels of a GPU series: model is the name, the others
// (uuid, pci_bus_id, serial, ...) are catalogue keys.
void Identity(DeviceFields& f, const Labels& labels) {
  for (const auto& [k, v] : labels) {
    std::optional<FieldId> id = k == "model" ? FieldId::kName : FindByKey(k);
    if (!id || !DeviceFields::Holds(*id) || Info(*id).unit != Unit::kText || v.empty()) continue;
    if (!f[*id].ok()) f[*id] = Reading::Text(v);
  }
}

DeviceBuild& Device(HostBuild& h, int gpu, const Labels& labels) {
  DeviceBuild& d = h.devices[gpu];
  d.sample.index = gpu;
  d.sample.fields[FieldId::kIndex] = Reading::Number(gpu);
  Identity(d.sample.fields, labels);
  return d;
}

DeviceSample& Mig(HostBuild& h, int gpu, const Labels& labels) {
  const long gi = WholeLong(Label(labels, "gpu_instance")).value_or(-1);
  const long ci = WholeLong(Label(labels, "compute_instance")).value_or(-1);
  DeviceSample& m = h.migs[{gpu, gi, ci, Label(labels, "uuid")}];
  m.index = gpu;
  if (gi >= 0) m.gpu_instance_id = static_cast<std::uint32_t>(gi);
  if (ci >= 0) m.compute_instance_id = static_cast<std::uint32_t>(ci);
  Identity(m.fields, labels);
  return m;
}

leaks::LeakReport& Leak(HostBuild& h, int gpu, const Labels& l) {
  const std::string &scope = Label(l, "scope"), &pid = Label(l, "pid");
  leaks::LeakReport& r = h.leaks[{gpu, scope, pid}];
  r.subject.gpu = gpu;
  if (auto p = WholeLong(pid)) r.subject.process = ProcessKey{static_cast<std::uint32_t>(*p), 0};
  if (scope == "framework") r.subject.framework = "framework";  // which one is not exported
  return r;
}

void Lease(HostBuild& h, const PromSample& s, std::string_view name) {
  if (!h.leases) h.leases.emplace();
  const std::string& uuid = Label(s.labels, "uuid");
  auto it = std::find_if(h.leases->leases.begin(), h.leases->leases.end(),
                         [&](const host::Lease& l) { return l.uuid == uuid; });
  if (it == h.leases->leases.end()) {
    if (s.value != 1) return;
    it = h.leases->leases.insert(h.leases->leases.end(), host::Lease());
    it->uuid = uuid;
    it->device = Label(s.labels, "gpu");
  }
  if (name != "lease_info") return;
  it->device = Label(s.labels, "device");
  if (auto pid = WholeLong(Label(s.labels, "pid"))) {
    it->holders = {ProcessKey{static_cast<std::uint32_t>(*pid), 0}};
  }
  it->command = Label(s.labels, "command");
  it->user = Label(s.labels, "user");
  it->ticket = static_cast<std::uint64_t>(WholeLong(Label(s.labels, "ticket")).value_or(0));
}

// One series of V into its host.
void Apply(HostBuild& h, const PromSample& s) {
  const std::string& full = Label(s.labels, "__name__");
  if (!full.starts_with(kSeriesPrefix)) return;
  const std::string_view name = std::string_view(full).substr(kSeriesPrefix.size());
  const std::optional<long> gpu_label = WholeLong(Label(s.labels, "gpu"));
  const int gpu = static_cast<int>(gpu_label.value_or(0));
  const bool number = std::isfinite(s.value);
  const auto pid = [&] {
    return static_cast<std::uint32_t>(WholeLong(Label(s.labels, "pid")).value_or(0));
  };
  if (name == "exporter_sampler_hung") {
    h.hung = s.value;
  } else if (name == "exporter_last_sample_age_seconds") {
    h.sample_age_s = s.value;
  } else if (name == "exporter_sample_duration_seconds") {
    h.sample_duration_s = s.value;
  } else if (!gpu_label) {
    // Every other series but the host fields names its GPU.
    if (const FieldInfo* f = FieldByPromName(full); f && f->scope == Scope::kHost && number) {
      h.host[f->id] = Reading::Number(s.value);
    }
  } else if (name == "gpu_up" || name == "gpu_info") {
    DeviceBuild& d = Device(h, gpu, s.labels);
    if (name == "gpu_up" && s.value == 0) {
      d.sample.health = DeviceHealth::kError;
      d.sample.health_detail = "gpuwatch_gpu_up 0: lost, failing or not answering";
    }
  } else if (name == "mig_info") {
    Mig(h, gpu, s.labels);
  } else if (name == "gpu_leased" || name == "mig_leased" || name == "lease_info") {
    Lease(h, s, name);
  } else if (name == "alert_active") {
    const std::string& severity = Label(s.labels, "severity");
    rules::ActiveAlert& a = h.alerts[{Label(s.labels, "rule"), gpu, severity}];
    a.rule = Label(s.labels, "rule");
    a.gpu = gpu;
    a.severity = severity == "critical" ? Severity::kCritical
                 : severity == "info"   ? Severity::kInfo
                                        : Severity::kWarning;
  } else if (name == "leak_suspected") {
    Leak(h, gpu, s.labels).estimate.suspected = s.value == 1;
  } else if (name == "oom_forecast") {
    Leak(h, gpu, s.labels).estimate.forecast = s.value == 1;
  } else if (name == "leak_rate_bytes_per_second") {
    leaks::LeakReport& r = Leak(h, gpu, s.labels);
    r.estimate.rate_bytes_per_s = number ? s.value : 0;
    r.estimate.enough_evidence = true;
  } else if (name == "time_to_oom_seconds") {
    if (number) h.time_to_oom_s[gpu] = s.value;
  } else if (name == "process_preallocated") {
    h.preallocated.emplace(gpu, pid());
  } else if (name == "framework_memory_bytes") {
    ProcessFrameworkMemory& f = h.framework[{gpu, pid(), Label(s.labels, "framework")}];
    f.gpu = gpu;
    f.pid = pid();
    f.framework = Label(s.labels, "framework");
    if (number) f.bytes[Label(s.labels, "kind")] = s.value;
  } else if (const FieldInfo* f = FieldByPromName(full)) {
    if (f->scope == Scope::kDevice) {
      DeviceBuild& d = Device(h, gpu, s.labels);
      if (number) d.sample.fields[f->id] = Reading::Number(s.value);
    } else if (f->scope == Scope::kProcess) {
      ProcessSample& p = Device(h, gpu, {}).processes[pid()];
      p.pid = pid();
      p.host.visibility = HostProcess::Visibility::kVisible;
      for (auto [key, into] : {std::pair{"command", &p.host.name}, {"user", &p.host.user}}) {
        if (s.labels.contains(key)) *into = Label(s.labels, key);
      }
      if (number) p.fields[f->id] = Reading::Number(s.value);
    }
  } else if (name.starts_with("mig_")) {
    const FieldInfo* mf = FieldByPromName(fmt::format("{}{}", kSeriesPrefix, name.substr(4)));
    if (mf && mf->scope == Scope::kDevice && number) {
      Mig(h, gpu, s.labels).fields[mf->id] = Reading::Number(s.value);
    }
  }
}

std::optional<double> NumberOf(const Reading& r) {
  return r.is_number() ? std::optional<double>(r.number()) : std::nullopt;
}

std::shared_ptr<const Snapshot> SnapshotOf(HostBuild& h, const std::string& instance,
                                           Clock::time_point fallback) {
  auto s = std::make_shared<Snapshot>();
  s->time = h.sampled.value_or(fallback);
  if (h.sample_age_s && std::isfinite(*h.sample_age_s)) {
    s->time = PromTime(ToSeconds(s->time) - *h.sample_age_s);  // when the daemon sampled
  }
  s->stale = h.hung.value_or(0) == 1;
  if (h.sample_duration_s && std::isfinite(*h.sample_duration_s)) {
    s->sample_duration = std::chrono::microseconds(std::llround(*h.sample_duration_s * 1e6));
  }
  s->source = "prometheus:" + instance;
  s->host = h.host;
  for (auto& [index, d] : h.devices) {
    for (auto& [pid, p] : d.processes) d.sample.processes.push_back(std::move(p));
    s->devices.push_back(std::move(d.sample));
  }
  std::map<int, int> mig_count;
  for (auto& [key, m] : h.migs) {
    m.mig_index = mig_count[m.index]++;
    s->mig_devices.push_back(std::move(m));
  }
  return s;
}

const DeviceSample* Find(const Snapshot& s, int gpu) {
  auto it = std::find_if(s.devices.begin(), s.devices.end(),
                         [&](const DeviceSample& d) { return d.index == gpu; });
  return it == s.devices.end() ? nullptr : &*it;
}

HostState StateOf(const std::string& key, HostBuild& h, const FleetAnswers& a) {
  HostState st;
  st.label = key;
  st.hostname = h.hostname;
  st.updated = a.now;
  // Down: its target's up is 0 (and no other target of it is up), it has no
  // live series, or its newest sample is older than a few scrape intervals.
  std::string up_instance, down_instance;
  for (const PromSample& u : a.up) {
    const auto target = std::make_pair(Label(u.labels, "instance"), Label(u.labels, "job"));
    if (!h.targets.contains(target)) continue;
    (u.value == 1 ? up_instance : down_instance) = target.first;
  }
  const std::string instance = !down_instance.empty() ? down_instance
                               : h.targets.empty()    ? key
                                                      : h.targets.begin()->first;
  const double interval_s =
      std::chrono::duration<double>(kSeenWindow).count() / std::max(1.0, h.samples);
  const double stale_s =
      std::max(kStaleIntervals * interval_s, std::chrono::duration<double>(kStaleFloor).count());
  if ((up_instance.empty() && !down_instance.empty()) || !h.live ||
      (h.age_s && *h.age_s > stale_s)) {
    st.down = fmt::format("Prometheus: target {} down", instance);
  }
  if (!h.known) return st;
  auto snapshot = SnapshotOf(h, instance, a.now);
  for (auto& [k, alert] : h.alerts) st.alerts.push_back(std::move(alert));
  for (auto& [k, r] : h.leaks) {
    const DeviceSample* d = Find(*snapshot, r.subject.gpu);
    if (d != nullptr) r.capacity_bytes = NumberOf(d->fields[FieldId::kMemoryTotalBytes]);
    auto tto = h.time_to_oom_s.find(r.subject.gpu);
    if (!r.subject.process && r.subject.framework.empty() && tto != h.time_to_oom_s.end()) {
      r.time_to_full = std::chrono::seconds(std::llround(tto->second));
      r.estimate.time_to_full = r.time_to_full;
    }
    st.leaks.push_back(std::move(r));
  }
  for (const auto& [gpu, pid] : h.preallocated) {
    Preallocation p;
    p.gpu = gpu;
    p.process.pid = pid;
    if (const DeviceSample* d = Find(*snapshot, gpu)) {
      for (const ProcessSample& ps : d->processes) {
        if (ps.pid == pid) p.bytes = ps.fields[FieldId::kProcessUsedMemoryBytes].number_or(0);
      }
      const double total = d->fields[FieldId::kMemoryTotalBytes].number_or(0);
      if (total > 0) p.share = p.bytes / total;
    }
    st.preallocated.push_back(p);
  }
  for (auto& [k, f] : h.framework) {
    f.time = snapshot->time;
    st.framework.push_back(std::move(f));
  }
  st.leases = std::move(h.leases);
  st.snapshot = std::move(snapshot);
  return st;
}

}  // namespace

std::vector<std::string> HostsWithoutLiveSeries(const FleetAnswers& a) {
  std::set<std::string> live, out;
  for (const PromSample& s : a.values) live.insert(HostKey(s.labels));
  for (const PromSample& s : a.seen) {
    if (!live.contains(HostKey(s.labels))) out.insert(HostKey(s.labels));
  }
  return {out.begin(), out.end()};
}

Result<std::vector<HostState>> FleetFromQueryResults(const FleetAnswers& a) {
  std::map<std::string, HostBuild> hosts;
  const auto at = [&](const PromSample& s) -> HostBuild& {
    HostBuild& h = hosts[HostKey(s.labels)];
    h.hostname = Label(s.labels, "hostname");
    if (s.labels.contains("instance")) {
      h.targets.emplace(Label(s.labels, "instance"), Label(s.labels, "job"));
    }
    return h;
  };
  for (const PromSample& s : a.seen) {
    HostBuild& h = at(s);
    h.samples = std::max(h.samples, s.value);
  }
  for (const PromSample& s : a.newest) {
    HostBuild& h = at(s);
    const double age = ToSeconds(s.time) - s.value;
    if (!h.age_s || age < *h.age_s) {
      h.age_s = age;
      h.sampled = PromTime(s.value);
    }
  }
  for (const PromSample& s : a.values) {
    HostBuild& h = at(s);
    h.live = h.known = true;
    Apply(h, s);
  }
  for (const PromSample& s : a.last_values) {
    HostBuild& h = at(s);
    if (h.live) continue;
    h.known = true;
    Apply(h, s);
  }
  for (const PromSample& s : a.last_seen) {
    HostBuild& h = at(s);
    if (!h.live && (!h.sampled || s.time > *h.sampled)) h.sampled = s.time;
  }
  if (hosts.empty()) {
    return Status::NotFound(
        "no gpuwatch series in Prometheus (does it scrape `gpuwatch serve` /metrics?)");
  }
  std::vector<HostState> out;
  for (auto& [key, h] : hosts) out.push_back(StateOf(key, h, a));
  return out;
}

}  // namespace gpuwatch::tui
