#include "analysis/select/selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <random>

namespace gpuwatch::select {
namespace {

std::optional<double> Number(const Reading& r) {
  if (!r.is_number()) return std::nullopt;
  return r.number();
}

std::string Text(const Reading& r) { return r.is_text() ? r.text() : std::string(); }

std::string Percent(double ratio) { return fmt::format("{:.0f} %", ratio * 100); }

std::string Size(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024)); }

bool MigOn(const DeviceSample& d) {
  const auto mode = Number(d.fields[FieldId::kMigMode]);
  return mode && *mode == 1;
}

// `d` (a GPU, or a MIG device whose parent is `parent`) against the limits.
// `processes`: the ones using its memory, for --account-as-free.
Candidate Evaluate(const DeviceSample& d, const DeviceSample* parent, const Criteria& c,
                   const std::optional<std::set<std::string>>& visible) {
  Candidate out;
  out.index = d.index;
  out.mig_index = d.mig_index;
  out.id = d.mig_index ? fmt::format("{}:{}", d.index, *d.mig_index) : std::to_string(d.index);
  out.uuid = Text(d.fields[FieldId::kUuid]);
  auto& why = out.reasons;
  const DeviceSample& gpu = parent != nullptr ? *parent : d;
  if (gpu.health != DeviceHealth::kOk) {
    why.push_back(
        fmt::format("not healthy ({})", gpu.health_detail.empty() ? "lost" : gpu.health_detail));
    return out;
  }
  const std::string parent_uuid = Text(gpu.fields[FieldId::kUuid]);
  if (visible && !visible->count(out.uuid) && !(parent != nullptr && visible->count(parent_uuid))) {
    why.push_back("not in CUDA_VISIBLE_DEVICES");
  }
  if (c.exclude.count(d.index)) why.push_back("excluded");
  if (auto it = c.taken.find(out.uuid); it != c.taken.end()) why.push_back(it->second);
  const auto total = Number(d.fields[FieldId::kMemoryTotalBytes]);
  auto free = Number(d.fields[FieldId::kMemoryFreeBytes]);
  if (!free && total) {
    if (auto used = Number(d.fields[FieldId::kMemoryUsedBytes])) free = *total - *used;
  }
  const auto util = Number(d.fields[FieldId::kUtilizationGpuRatio]);
  if (!total || !free || *total <= 0) {
    why.push_back("memory unknown");
    return out;
  }
  double counted_free = *free;
  for (const ProcessSample& p : gpu.processes) {
    if (!c.free_users.count(p.host.user)) continue;
    if (parent != nullptr && p.gpu_instance_id != d.gpu_instance_id) continue;
    if (auto m = Number(p.fields[FieldId::kProcessUsedMemoryBytes])) counted_free += *m;
  }
  counted_free = std::min(counted_free, *total);
  out.free_bytes = counted_free;
  out.memory_utilization = 1.0 - counted_free / *total;
  out.utilization = util.value_or(0);
  if (c.min_free_bytes && counted_free < *c.min_free_bytes) {
    why.push_back(fmt::format("{} free < {}", Size(counted_free), Size(*c.min_free_bytes)));
  }
  if (c.max_memory_utilization && out.memory_utilization > *c.max_memory_utilization) {
    why.push_back(fmt::format("memory {} used > {}", Percent(out.memory_utilization),
                              Percent(*c.max_memory_utilization)));
  }
  if (c.max_utilization) {
    if (!util) {
      why.push_back("utilization unknown");
    } else if (*util > *c.max_utilization) {
      why.push_back(
          fmt::format("utilization {} > {}", Percent(*util), Percent(*c.max_utilization)));
    }
  }
  return out;
}

// A UUID entry of CUDA_VISIBLE_DEVICES: the GPU or MIG device it names (a
// unique prefix of a UUID, with or without "GPU-" / "MIG-").
std::optional<std::string> ByUuid(std::string_view entry, const Snapshot& s) {
  std::optional<std::string> found;
  for (const auto* list : {&s.devices, &s.mig_devices}) {
    for (const DeviceSample& d : *list) {
      const std::string uuid = Text(d.fields[FieldId::kUuid]);
      const auto dash = uuid.find('-');
      const std::string_view bare =
          dash == 3 ? std::string_view(uuid).substr(4) : std::string_view(uuid);
      if (uuid.rfind(entry, 0) == 0 || bare.rfind(entry, 0) == 0) {
        if (found) return std::nullopt;  // ambiguous: CUDA stops there too
        found = uuid;
      }
    }
  }
  return found;
}

}  // namespace

FieldMask SelectionFields() {
  FieldMask m;
  for (FieldId id :
       {FieldId::kMigMode, FieldId::kUuid, FieldId::kName, FieldId::kMemoryTotalBytes,
        FieldId::kMemoryFreeBytes, FieldId::kMemoryUsedBytes, FieldId::kUtilizationGpuRatio}) {
    Set(m, id);
  }
  return m;
}

Result<Order> ParseOrder(std::string_view text) {
  if (text == "load") return Order::kLoad;
  if (text == "memory") return Order::kMemory;
  if (text == "index") return Order::kIndex;
  if (text == "random") return Order::kRandom;
  return Status::InvalidArgument(
      fmt::format("--order \"{}\": must be load, memory, index or random", text));
}

Result<std::optional<std::set<std::string>>> VisibleDevices(std::optional<std::string_view> visible,
                                                            std::optional<std::string_view> order,
                                                            const Snapshot& snapshot) {
  if (!visible) return std::optional<std::set<std::string>>();
  bool one_model = true;
  for (const DeviceSample& d : snapshot.devices) {
    one_model = one_model && Text(d.fields[FieldId::kName]) ==
                                 Text(snapshot.devices.front().fields[FieldId::kName]);
  }
  std::set<std::string> out;
  std::string_view rest = *visible;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view entry = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    int ordinal = -1;
    const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), ordinal);
    if (ec == std::errc() && end == entry.data() + entry.size()) {
      if (!(order && *order == "PCI_BUS_ID") && !one_model) {
        return Status::InvalidArgument(
            "CUDA_VISIBLE_DEVICES lists ordinals, but these GPUs are of several models and "
            "CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA may number them differently from NVML. "
            "Set CUDA_DEVICE_ORDER=PCI_BUS_ID or list UUIDs");
      }
      const auto gpu = std::find_if(snapshot.devices.begin(), snapshot.devices.end(),
                                    [&](const DeviceSample& d) { return d.index == ordinal; });
      if (gpu == snapshot.devices.end()) break;  // CUDA ignores this entry and the ones after it
      out.insert(Text(gpu->fields[FieldId::kUuid]));
      continue;
    }
    auto found = ByUuid(entry, snapshot);
    if (!found) break;
    out.insert(*found);
  }
  return std::optional<std::set<std::string>>(std::move(out));
}

Choice Choose(const Snapshot& snapshot, const Criteria& criteria,
              const std::optional<std::set<std::string>>& visible) {
  Choice choice;
  for (const DeviceSample& d : snapshot.devices) {
    std::vector<const DeviceSample*> instances;
    for (const DeviceSample& m : snapshot.mig_devices) {
      if (m.index == d.index) instances.push_back(&m);
    }
    if (!MigOn(d) || instances.empty()) {
      choice.candidates.push_back(Evaluate(d, nullptr, criteria, visible));
      continue;
    }
    Candidate whole;
    whole.index = d.index;
    whole.id = std::to_string(d.index);
    whole.uuid = Text(d.fields[FieldId::kUuid]);
    std::string ids;
    for (const DeviceSample* m : instances) {
      ids += fmt::format("{}{}:{}", ids.empty() ? "" : ", ", m->index, m->mig_index.value_or(0));
    }
    whole.reasons.push_back(fmt::format("MIG mode on: its MIG devices ({}) are offered", ids));
    choice.candidates.push_back(std::move(whole));
    for (const DeviceSample* m : instances) {
      choice.candidates.push_back(Evaluate(*m, &d, criteria, visible));
    }
  }
  if (criteria.count > 1) {
    for (Candidate& c : choice.candidates) {
      if (c.mig_index) {
        c.reasons.push_back("a MIG device is only given alone: CUDA shows a process one");
      }
    }
  }
  std::vector<Candidate> ok;
  for (const Candidate& c : choice.candidates) {
    if (c.reasons.empty()) ok.push_back(c);
  }
  switch (criteria.order) {
    case Order::kLoad:
      std::stable_sort(ok.begin(), ok.end(), [](const Candidate& a, const Candidate& b) {
        return a.utilization + a.memory_utilization < b.utilization + b.memory_utilization;
      });
      break;
    case Order::kMemory:
      std::stable_sort(ok.begin(), ok.end(), [](const Candidate& a, const Candidate& b) {
        return a.free_bytes > b.free_bytes;
      });
      break;
    case Order::kIndex:
      break;  // snapshot order is NVML order
    case Order::kRandom: {
      std::mt19937_64 rng(criteria.seed);
      std::shuffle(ok.begin(), ok.end(), rng);
      break;
    }
  }
  const auto n =
      std::min<std::size_t>(ok.size(), static_cast<std::size_t>(std::max(0, criteria.count)));
  choice.chosen.assign(ok.begin(), ok.begin() + static_cast<std::ptrdiff_t>(n));
  return choice;
}

}  // namespace gpuwatch::select
