#include "analysis/diagnoses/diagnoses.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpuwatch {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr unsigned long long kThermalBits = 0x20 | 0x40;  // sw / hw thermal slowdown
constexpr unsigned long long kPowerBits =
    0x4 | 0x80 | 0x8;  // sw power cap, hw power brake, hw slowdown
constexpr unsigned long long kIdleBit = 0x1;

double GiB(double bytes) { return bytes / (1024.0 * 1024 * 1024); }

std::string Minutes(milliseconds d) {
  const auto s = duration_cast<seconds>(d).count();
  return s >= 60 ? fmt::format("{} min {} s", s / 60, s % 60) : fmt::format("{} s", s);
}

Event Diagnosis(const Snapshot& s, int gpu, Severity severity, std::string source,
                std::string message) {
  Event e;
  e.time = s.time;
  e.kind = Event::Kind::kDiagnosis;
  e.severity = severity;
  e.source = std::move(source);
  e.gpu = gpu;
  e.message = std::move(message);
  return e;
}

}  // namespace

Diagnoser::Diagnoser(DiagnosisOptions options) : options_(options) {}

FieldMask Diagnoser::Fields() {
  FieldMask m;
  for (FieldId id :
       {FieldId::kMemoryTotalBytes, FieldId::kUtilizationGpuRatio, FieldId::kClockEventReasons,
        FieldId::kProcessUsedMemoryBytes, FieldId::kProcessCpuRatio}) {
    Set(m, id);
  }
  return m;
}

std::vector<Event> Diagnoser::Observe(const Snapshot& s) {
  std::vector<Event> out;
  if (s.stale) return out;  // nothing new was read
  std::set<std::pair<int, ProcessKey>> alive;
  for (const auto& d : s.devices) {
    if (d.health != DeviceHealth::kOk) continue;
    for (const auto& p : d.processes)
      alive.insert({d.index, ProcessKey{p.pid, p.host.start_ticks}});
    CheckPreallocation(s, d, out);
    Starvation(s, d, out);
    Throttling(s, d, out);
  }
  std::erase_if(processes_, [&](const auto& kv) { return alive.count(kv.first) == 0; });
  last_time_ = s.time;
  return out;
}

void Diagnoser::CheckPreallocation(const Snapshot& s, const DeviceSample& d,
                                   std::vector<Event>& out) {
  const Reading& total = d.fields[FieldId::kMemoryTotalBytes];
  if (!total.is_number() || total.number() <= 0) return;
  const double threshold = options_.preallocation_ratio * total.number();
  for (const auto& p : d.processes) {
    const Reading& used = p.fields[FieldId::kProcessUsedMemoryBytes];
    if (!used.is_number()) continue;
    const double bytes = used.number();
    auto [it, fresh] = processes_.try_emplace({d.index, ProcessKey{p.pid, p.host.start_ticks}});
    ProcessTrack& t = it->second;
    if (fresh) {
      // Seen from its start when it began less than the allowed window ago.
      t.seen_from_start =
          p.host.start_time && s.time - *p.host.start_time <= options_.preallocation_within;
      t.big_at_first_sight = bytes >= threshold;
    }
    if (t.reported || t.disqualified) continue;
    if (!t.big_since) {
      if (bytes < threshold) {
        // Still small once the window after its start has passed: it grows like
        // real use, not like a reservation taken at start.
        if (!t.seen_from_start ||
            (p.host.start_time && s.time - *p.host.start_time > options_.preallocation_within)) {
          t.disqualified = !t.big_at_first_sight;
        }
        continue;
      }
      if (!t.seen_from_start && !t.big_at_first_sight) {
        t.disqualified = true;  // grew to it while we watched, later than "at start"
        continue;
      }
      t.big_since = s.time;
      t.min_bytes = t.max_bytes = bytes;
    }
    t.min_bytes = std::min(t.min_bytes, bytes);
    t.max_bytes = std::max(t.max_bytes, bytes);
    if (t.max_bytes - t.min_bytes > options_.preallocation_flat_band * total.number()) {
      t.disqualified = true;  // it moves: real use, not a reservation
      continue;
    }
    ++t.big_samples;
    if (s.time - *t.big_since < options_.preallocation_flat_for ||
        t.big_samples < options_.preallocation_min_samples) {
      continue;
    }
    t.reported = true;
    t.share = bytes / total.number();
    const std::string when =
        t.seen_from_start ? "within seconds of starting" : "since gpuwatch first saw it";
    Event e = Diagnosis(
        s, d.index, Severity::kWarning, "preallocation",
        fmt::format("pid {} holds {:.1f} GiB ({:.0f} % of GPU {}) {} and stays flat: looks like "
                    "TensorFlow/JAX pre-allocation: real use is unknown; set "
                    "TF_FORCE_GPU_ALLOW_GROWTH=true or XLA_PYTHON_CLIENT_PREALLOCATE=false, or use "
                    "the Python adapter",
                    p.pid, GiB(bytes), bytes / total.number() * 100, d.index, when));
    e.process = it->first.second;
    e.value = bytes;
    out.push_back(std::move(e));
  }
}

std::vector<Preallocation> Diagnoser::Preallocated() const {
  std::vector<Preallocation> out;
  for (const auto& [key, t] : processes_) {
    if (t.reported) out.push_back(Preallocation{key.first, key.second, t.max_bytes, t.share});
  }
  return out;
}

std::vector<StandingDiagnosis> Diagnoser::Standing() const {
  std::vector<StandingDiagnosis> out;
  for (const auto& [gpu, g] : gpus_) {
    for (const auto* e : {&g.starved_report, &g.throttle_report}) {
      if (*e)
        out.push_back(
            {gpu, (*e)->source, (*e)->severity, (*e)->message, (*e)->time, (*e)->process});
    }
  }
  return out;
}

void Diagnoser::Starvation(const Snapshot& s, const DeviceSample& d, std::vector<Event>& out) {
  GpuTrack& g = gpus_[d.index];
  const Reading& util = d.fields[FieldId::kUtilizationGpuRatio];
  const ProcessSample* holder = nullptr;
  for (const auto& p : d.processes) {
    const Reading& used = p.fields[FieldId::kProcessUsedMemoryBytes];
    if (used.is_number() && used.number() >= options_.starved_min_memory_bytes &&
        (holder == nullptr ||
         used.number() > holder->fields[FieldId::kProcessUsedMemoryBytes].number())) {
      holder = &p;
    }
  }
  const bool starved =
      util.is_number() && util.number() < options_.starved_utilization && holder != nullptr;
  if (!starved) {
    g.starved_since.reset();
    g.starved_report.reset();
    return;
  }
  if (g.starved_since && last_time_) {
    starved_total_[d.index] += duration_cast<milliseconds>(s.time - *last_time_);
  }
  if (!g.starved_since) g.starved_since = s.time;
  if (g.starved_report || s.time - *g.starved_since < options_.starved_for) return;
  const Reading& cpu = holder->fields[FieldId::kProcessCpuRatio];
  std::string hint;
  if (cpu.is_number() && cpu.number() >= options_.cpu_bound_ratio) {
    hint = fmt::format(
        "pid {} uses {:.0f} % of a CPU core: it is CPU-bound (data loading or preprocessing in the "
        "training process: add DataLoader workers, move augmentation to the GPU)",
        holder->pid, cpu.number() * 100);
  } else {
    hint = fmt::format(
        "pid {} is not CPU-bound ({}): the GPU waits for input: check the input pipeline "
        "(DataLoader workers, storage or network reads, prefetching)",
        holder->pid,
        cpu.is_number() ? fmt::format("{:.0f} % of a core", cpu.number() * 100)
                        : "CPU use unknown");
  }
  Event e = Diagnosis(
      s, d.index, Severity::kWarning, "starved",
      fmt::format("GPU {} starved: utilization {:.0f} % for {} while holding {:.1f} GiB; {}",
                  d.index, util.number() * 100,
                  Minutes(duration_cast<milliseconds>(s.time - *g.starved_since)),
                  GiB(holder->fields[FieldId::kProcessUsedMemoryBytes].number()), hint));
  e.process = ProcessKey{holder->pid, holder->host.start_ticks};
  e.value = util.number();
  g.starved_report = e;
  out.push_back(std::move(e));
}

void Diagnoser::Throttling(const Snapshot& s, const DeviceSample& d, std::vector<Event>& out) {
  GpuTrack& g = gpus_[d.index];
  const Reading& reasons = d.fields[FieldId::kClockEventReasons];
  const auto mask = reasons.is_number() ? static_cast<unsigned long long>(reasons.number()) : 0ull;
  const bool limited = (mask & ~kIdleBit) != 0;
  if (last_time_ && limited) {
    const auto dt = duration_cast<milliseconds>(s.time - *last_time_);
    ThrottleTotals& t = throttle_[d.index];
    t.any += dt;
    if (mask & kThermalBits) t.thermal += dt;
    if (mask & kPowerBits) t.power += dt;
  }
  if (!limited) {
    g.throttled_since.reset();
    g.throttle_report.reset();
    return;
  }
  if (!g.throttled_since) g.throttled_since = s.time;
  if (g.throttle_report || s.time - *g.throttled_since < options_.throttle_report_after) return;
  std::string why;
  if (mask & kThermalBits) why += "thermal (the GPU is too hot: check cooling and airflow)";
  if (mask & kPowerBits) why += std::string(why.empty() ? "" : "; ") + "power (at its power limit)";
  if (why.empty()) why = fmt::format("reasons 0x{:x}", mask);
  g.throttle_report = Diagnosis(
      s, d.index, (mask & kThermalBits) ? Severity::kWarning : Severity::kInfo, "throttling",
      fmt::format("GPU {} has run with clocks held down for {}: {}", d.index,
                  Minutes(duration_cast<milliseconds>(s.time - *g.throttled_since)), why));
  out.push_back(*g.throttle_report);
}

}  // namespace gpuwatch
