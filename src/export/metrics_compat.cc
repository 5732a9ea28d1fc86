#include "export/metrics_compat.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace gpuwatch::metrics {
namespace {

std::string Text(const Reading& r) { return r.is_text() ? r.text() : std::string(); }

std::optional<double> Value(const Reading& r) {
  if (r.is_number() && std::isfinite(r.number())) return r.number();
  return std::nullopt;
}

// dcgm-exporter's units for the fields it shares with the catalogue.
double DcgmScale(const FieldInfo& f) {
  switch (f.unit) {
    case Unit::kBytes:
      return 1.0 / (1024 * 1024);  // MiB
    case Unit::kRatio:
      return 100;  // percent
    case Unit::kHertz:
      return 1e-6;  // MHz
    case Unit::kJoules:
      return 1000;  // mJ
    case Unit::kBytesPerSecond:
      return 1.0 / 1024;  // KB/s
    default:
      return 1;
  }
}

std::string SmiUuid(const DeviceSample& d) {
  std::string uuid = Text(d.fields[FieldId::kUuid]);
  if (uuid.starts_with("GPU-")) uuid.erase(0, 4);
  return uuid;
}

}  // namespace

void AddDcgm(Writer& w, const Snapshot& s, const std::string& hostname) {
  for (const auto& d : s.devices) {
    if (d.health != DeviceHealth::kOk) continue;
    const Labels labels = {{"gpu", std::to_string(d.index)},
                           {"UUID", Text(d.fields[FieldId::kUuid])},
                           {"pci_bus_id", Text(d.fields[FieldId::kPciBusId])},
                           {"device", fmt::format("nvidia{}", d.index)},
                           {"modelName", Text(d.fields[FieldId::kName])},
                           {"Hostname", hostname}};
    for (const auto& f : Catalogue()) {
      if (f.scope != Scope::kDevice || f.dcgm_alias.empty()) continue;
      auto v = Value(d.fields[f.id]);
      if (!v) continue;
      const Type type = f.kind == Kind::kCounter ? Type::kUnknown : Type::kGauge;
      w.Add(f.dcgm_alias, type, fmt::format("{} (dcgm-exporter name and unit)", f.help), labels,
            *v * DcgmScale(f));
    }
  }
}

std::string NvidiaSmiName(const FieldInfo& f) {
  if (f.scope != Scope::kDevice || f.smi_name.empty() || f.kind == Kind::kInfo) return {};
  std::string name = "nvidia_smi_";
  for (char c : f.smi_name) name += c == '.' ? '_' : c;
  switch (f.unit) {  // nvidia-smi's [MiB], [%], [W], [MHz], converted to base units
    case Unit::kBytes:
      return name + "_bytes";
    case Unit::kRatio:
      return name + "_ratio";
    case Unit::kWatts:
      return name + "_watts";
    case Unit::kHertz:
      return name + "_clock_hz";
    default:
      return name;
  }
}

void AddNvidiaSmi(Writer& w, const Snapshot& s, bool processes) {
  const std::string driver = Text(s.host[FieldId::kDriverVersion]);
  const std::string cuda = Text(s.host[FieldId::kCudaDriverVersion]);
  for (const auto& d : s.devices) {
    const std::string uuid = SmiUuid(d);
    w.Add(
        "nvidia_smi_gpu_info", Type::kGauge,
        "A metric with a constant '1' value labeled by gpu uuid, name, vbios_version, "
        "driver_version, pci_bus_id, serial, compute_cap, index, cuda_version (nvidia_gpu_exporter "
        "name)",
        {{"uuid", uuid},
         {"name", Text(d.fields[FieldId::kName])},
         {"driver_version", driver},
         {"vbios_version", Text(d.fields[FieldId::kVbiosVersion])},
         {"pci_bus_id", Text(d.fields[FieldId::kPciBusId])},
         {"serial", Text(d.fields[FieldId::kSerial])},
         {"compute_cap", Text(d.fields[FieldId::kComputeCapability])},
         {"index", std::to_string(d.index)},
         {"cuda_version", cuda}},
        1);
    if (d.health != DeviceHealth::kOk) continue;
    const Labels labels = {{"uuid", uuid}};
    for (const auto& f : Catalogue()) {
      const std::string name = NvidiaSmiName(f);
      if (name.empty()) continue;
      // That exporter types every query field a gauge, error counts included.
      if (auto v = Value(d.fields[f.id])) {
        w.Add(name, Type::kGauge, fmt::format("{} (nvidia_gpu_exporter name)", f.smi_name), labels,
              *v);
      }
    }
    // Its NVML-only families.
    if (auto v = Value(d.fields[FieldId::kEnergyJoules])) {
      w.Add("nvidia_smi_energy_joules_total", Type::kCounter,
            "Total energy consumed by the GPU in joules since the driver was last loaded "
            "(nvidia_gpu_exporter name)",
            labels, *v);
    }
    for (const auto& [id, name] : {std::pair{FieldId::kPcieTxBytesPerSecond,
                                             "nvidia_smi_pcie_throughput_tx_bytes_per_second"},
                                   std::pair{FieldId::kPcieRxBytesPerSecond,
                                             "nvidia_smi_pcie_throughput_rx_bytes_per_second"}}) {
      if (auto v = Value(d.fields[id])) {
        w.Add(name, Type::kGauge, fmt::format("{} (nvidia_gpu_exporter name)", Info(id).help),
              labels, *v);
      }
    }
    if (!processes) continue;
    for (const auto& p : d.processes) {
      auto v = Value(p.fields[FieldId::kProcessUsedMemoryBytes]);
      if (!v) continue;
      w.Add("nvidia_smi_compute_app_used_memory_bytes", Type::kGauge,
            "GPU memory used by the process (nvidia_gpu_exporter name; --process-metrics)",
            {{"pid", std::to_string(p.pid)},
             {"process_name", (p.host.name.empty() ? p.host.command : p.host.name).substr(0, 64)},
             {"uuid", uuid}},
            *v);
    }
  }
}

}  // namespace gpuwatch::metrics
