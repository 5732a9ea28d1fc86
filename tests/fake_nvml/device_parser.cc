#include "device_parser.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "backends/nvml/nvml_api.h"
#include "model_defaults.h"
#include "yaml_reader.h"

namespace gpuwatch::fake_nvml {
namespace {

unsigned ReadUnsigned(MapReader& r, const std::string& key, unsigned fallback) {
  auto v = r.Number(key);
  if (!v) return fallback;
  // Range first: casting a double beyond unsigned's range is undefined.
  if (!(*v >= 0 && *v <= static_cast<double>(std::numeric_limits<unsigned>::max())) ||
      *v != static_cast<double>(static_cast<unsigned>(*v))) {
    throw ScenarioError(r.Get(key).Mark(),
                        "'" + key + "' of " + r.where() + " must be a non-negative integer");
  }
  return static_cast<unsigned>(*v);
}

// `key: unsupported` turns a default-present reading off.
bool IsUnsupported(MapReader& r, const std::string& key) {
  YAML::Node n = r.Get(key);
  return n.IsDefined() && n.IsScalar() && n.Scalar() == "unsupported";
}

int ComputeModeFromName(const YAML::Node& node, const std::string& where) {
  const std::string text = ScalarText(node, where, "a compute mode");
  if (text == "Default") return NVML_COMPUTEMODE_DEFAULT;
  if (text == "Exclusive_Thread") return NVML_COMPUTEMODE_EXCLUSIVE_THREAD;
  if (text == "Prohibited") return NVML_COMPUTEMODE_PROHIBITED;
  if (text == "Exclusive_Process") return NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
  throw ScenarioError(node.Mark(), "unknown compute mode '" + text + "' in " + where +
                                       " (Default, Exclusive_Process, Prohibited)");
}

void ReadMig(MapReader& d, DeviceSpec& spec, unsigned index) {
  if (!d.Has("mig")) return;
  MapReader m(d.Get("mig"), "mig of " + d.where());
  spec.mig_enabled = m.Bool("enabled").value_or(true);
  YAML::Node list = m.Get("instances");
  if (list.IsDefined() && !list.IsNull()) {
    if (!list.IsSequence()) throw ScenarioError(list.Mark(), "instances must be a list");
    for (std::size_t i = 0; i < list.size(); ++i) {
      MapReader r(list[i], "MIG instance " + std::to_string(i) + " of " + d.where());
      MigInstanceSpec inst;
      inst.gi = ReadUnsigned(r, "gi", static_cast<unsigned>(i + 1));
      inst.ci = ReadUnsigned(r, "ci", 0);
      inst.profile = r.String("profile").value_or("1g.10gb");
      inst.memory_total_bytes = r.Number("memory_total", SizeBytes, "a size")
                                    .value_or(MigProfileMemoryBytes(inst.profile));
      inst.uuid = r.String("uuid").value_or(MakeUuid("MIG", 0x4d4947000ull + index * 16 + i));
      r.Finish();
      spec.mig_instances.push_back(inst);
    }
  }
  if (spec.mig_instances.size() > 7) {
    throw ScenarioError(list.Mark(), "at most 7 MIG instances in " + d.where());
  }
  if (!spec.traits.mig_capable && spec.mig_enabled) {
    throw ScenarioError(m.node().Mark(), spec.name + " does not support MIG (" + d.where() + ")");
  }
  m.Finish();
}

void ReadXids(MapReader& d, DeviceSpec& spec) {
  YAML::Node list = d.Get("xid");
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) {
    throw ScenarioError(list.Mark(), "xid must be a list of {at, code} in " + d.where());
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    MapReader r(list[i], "xid " + std::to_string(i) + " of " + d.where());
    XidSpec x;
    auto at = r.Number("at", DurationSeconds, "a duration");
    if (!at || *at < 0) {
      throw ScenarioError(list[i].Mark(), "a non-negative 'at' is required in " + r.where());
    }
    x.at_s = *at;
    if (!r.Has("code")) throw ScenarioError(list[i].Mark(), "'code' is required in " + r.where());
    x.code = ReadUnsigned(r, "code", 0);
    if (x.code == 0)
      throw ScenarioError(r.Get("code").Mark(), "XID codes start at 1 in " + r.where());
    r.Finish();
    spec.xids.push_back(x);
  }
  std::stable_sort(spec.xids.begin(), spec.xids.end(),
                   [](const XidSpec& a, const XidSpec& b) { return a.at_s < b.at_s; });
}

}  // namespace

ProcessSpec ParseProcess(const YAML::Node& node, const std::string& where,
                         std::optional<unsigned>* device) {
  MapReader r(node, where);
  ProcessSpec p;
  const bool has_pid = r.Has("pid");
  const YAML::Node pid_node = has_pid ? r.Get("pid") : YAML::Node();
  const bool child = pid_node.IsScalar() && pid_node.Scalar() == "child";
  if (child && r.Has("pid_file")) {
    throw ScenarioError(node.Mark(), "give 'pid' or 'pid_file', not both, in " + where);
  }
  if (child) {
    p.child_of_caller = true;
  } else if (auto file = r.String("pid_file")) {
    if (has_pid) {
      throw ScenarioError(node.Mark(), "give 'pid' or 'pid_file', not both, in " + where);
    }
    p.pid_file = *file;
  } else {
    p.pid = has_pid ? ReadUnsigned(r, "pid", 0) : 0;
    if (p.pid == 0) {
      throw ScenarioError(node.Mark(),
                          "a positive 'pid' (or a 'pid_file') is required in " + where);
    }
  }
  const std::string named = "process " +
                            (p.child_of_caller    ? "child"
                             : p.pid_file.empty() ? std::to_string(p.pid)
                                                  : p.pid_file) +
                            " (" + where + ")";
  if (device != nullptr) {
    if (!r.Has("device")) throw ScenarioError(node.Mark(), "'device' is required in " + named);
    *device = ReadUnsigned(r, "device", 0);
  }
  if (auto type = r.String("type")) {
    if (*type == "compute" || *type == "C") {
      p.type = ProcessType::kCompute;
    } else if (*type == "graphics" || *type == "G") {
      p.type = ProcessType::kGraphics;
    } else {
      throw ScenarioError(r.Get("type").Mark(), "type must be compute or graphics in " + named);
    }
  }
  p.start_s = r.Number("start", DurationSeconds, "a duration").value_or(0);
  p.end_s = r.Number("end", DurationSeconds, "a duration");
  const std::uint64_t seed = 0x70726f63ull ^ p.pid;
  const YAML::Node memory = r.Has("memory") ? r.Get("memory") : YAML::Node();
  if (memory.IsScalar() && MemoryExpression::Mentions(memory.Scalar())) {
    if (!p.child_of_caller) {
      throw ScenarioError(memory.Mark(),
                          "a memory expression of bs needs 'pid: child' in " + named);
    }
    std::string error;
    p.memory_of_bs = MemoryExpression::Parse(memory.Scalar(), &error);
    if (!p.memory_of_bs) throw ScenarioError(memory.Mark(), error + " in " + named);
  } else {
    p.memory_bytes = r.SeriesAt("memory", seed, SizeBytes).value_or(Series());
  }
  p.memory_unavailable = r.Bool("memory_unavailable").value_or(false);
  p.sm_util = r.SeriesAt("sm_util", seed).value_or(Series());
  p.mem_util = r.SeriesAt("mem_util", seed).value_or(Series());
  p.enc_util = r.SeriesAt("enc_util", seed).value_or(Series());
  p.dec_util = r.SeriesAt("dec_util", seed).value_or(Series());
  p.util_stale = r.Bool("util_stale").value_or(false);
  if (r.Has("gi")) p.gi = ReadUnsigned(r, "gi", 0);
  if (r.Has("ci")) p.ci = ReadUnsigned(r, "ci", 0);
  r.Finish();
  return p;
}

DeviceSpec ParseDevice(const YAML::Node& node, unsigned index) {
  const std::string where = "device " + std::to_string(index);
  MapReader d(node, where);
  DeviceSpec s = DefaultDevice(d.String("name").value_or("NVIDIA H200"), index);
  s.index = index;
  const std::uint64_t seed = 0x646576ull * 1000 + index;

  if (auto v = d.String("uuid")) s.uuid = *v;
  if (auto v = d.String("serial")) s.serial = *v;
  if (auto v = d.String("pci_bus_id")) s.pci_bus_id = *v;
  if (auto v = d.String("vbios")) s.vbios = *v;
  s.pci_device_id = ReadUnsigned(d, "pci_device_id", s.pci_device_id);
  s.pci_subsystem_id = ReadUnsigned(d, "pci_subsystem_id", s.pci_subsystem_id);
  if (auto cc = d.String("compute_capability")) {
    if (std::sscanf(cc->c_str(), "%d.%d", &s.cc_major, &s.cc_minor) != 2) {
      throw ScenarioError(d.Get("compute_capability").Mark(),
                          "compute_capability must look like 9.0 in " + where);
    }
  }
  s.memory_total_bytes =
      d.Number("memory_total", SizeBytes, "a size").value_or(s.memory_total_bytes);
  s.bar1_total_bytes = d.Number("bar1_total", SizeBytes, "a size").value_or(s.bar1_total_bytes);
  s.memory_overhead_bytes =
      d.Number("memory_overhead", SizeBytes, "a size").value_or(s.memory_overhead_bytes);

  if (d.Has("power_limits")) {
    MapReader p(d.Get("power_limits"), "power_limits of " + where);
    auto limit = p.Number("limit");
    if (limit) s.power_limit_w = s.power_enforced_w = *limit;
    s.power_default_w = p.Number("default").value_or(s.power_default_w);
    s.power_min_w = p.Number("min").value_or(s.power_min_w);
    s.power_max_w = p.Number("max").value_or(s.power_max_w);
    s.power_enforced_w = p.Number("enforced").value_or(s.power_enforced_w);
    p.Finish();
  }
  if (d.Has("max_clocks")) {
    MapReader c(d.Get("max_clocks"), "max_clocks of " + where);
    s.max_sm_mhz = ReadUnsigned(c, "sm", s.max_sm_mhz);
    s.max_mem_mhz = ReadUnsigned(c, "mem", s.max_mem_mhz);
    s.max_graphics_mhz = ReadUnsigned(c, "graphics", s.max_graphics_mhz);
    s.max_video_mhz = ReadUnsigned(c, "video", s.max_video_mhz);
    c.Finish();
  }
  if (d.Has("pcie")) {
    MapReader c(d.Get("pcie"), "pcie of " + where);
    s.pcie_gen_max = ReadUnsigned(c, "gen_max", s.pcie_gen_max);
    s.pcie_gen_current = ReadUnsigned(c, "gen_current", s.pcie_gen_current);
    s.pcie_width_max = ReadUnsigned(c, "width_max", s.pcie_width_max);
    s.pcie_width_current = ReadUnsigned(c, "width_current", s.pcie_width_current);
    c.Finish();
  }
  s.persistence_mode = d.Bool("persistence_mode").value_or(s.persistence_mode);
  if (YAML::Node cm = d.Get("compute_mode"); cm.IsDefined()) {
    s.compute_mode = ComputeModeFromName(cm, "compute_mode of " + where);
  }
  s.ecc_mode = d.Bool("ecc_mode").value_or(s.ecc_mode);
  s.display_mode = d.Bool("display_mode");
  s.display_active = d.Bool("display_active").value_or(false);
  ReadMig(d, s, index);
  if (auto mask = d.Number("supported_clock_event_reasons")) {
    if (!(*mask >= 0 && *mask < 18446744073709551616.0)) {  // 2^64
      throw ScenarioError(d.Get("supported_clock_event_reasons").Mark(),
                          "supported_clock_event_reasons of " + where + " must be a 64-bit mask");
    }
    s.supported_clock_event_reasons = static_cast<std::uint64_t>(*mask);
  }

  // Dynamic series.
  s.memory_used = d.SeriesAt("memory_used", seed, SizeBytes);
  if (auto v = d.SeriesAt("memory_reserved", seed, SizeBytes)) s.memory_reserved = *v;
  if (auto v = d.SeriesAt("bar1_used", seed, SizeBytes)) s.bar1_used = *v;
  s.utilization_gpu = d.SeriesAt("utilization_gpu", seed);
  s.utilization_memory = d.SeriesAt("utilization_memory", seed);
  s.utilization_encoder = d.SeriesAt("utilization_encoder", seed).value_or(Series());
  s.utilization_decoder = d.SeriesAt("utilization_decoder", seed).value_or(Series());
  s.temperature_gpu = d.SeriesAt("temperature_gpu", seed);
  if (IsUnsupported(d, "temperature_memory")) {
    s.has_memory_temperature = false;
  } else if ((s.temperature_memory = d.SeriesAt("temperature_memory", seed))) {
    s.has_memory_temperature = true;
  }
  if (IsUnsupported(d, "fan")) {
    s.fan.reset();
  } else if (auto fan = d.SeriesAt("fan", seed)) {
    s.fan = fan;
  }
  s.power_draw = d.SeriesAt("power_draw", seed);
  s.power_instant = d.SeriesAt("power_instant", seed);
  s.power_average = d.SeriesAt("power_average", seed);
  s.energy_mj = d.SeriesAt("energy", seed);
  if (d.Has("clocks")) {
    MapReader c(d.Get("clocks"), "clocks of " + where);
    s.clock_sm = c.SeriesAt("sm", seed);
    s.clock_mem = c.SeriesAt("mem", seed);
    s.clock_graphics = c.SeriesAt("graphics", seed);
    s.clock_video = c.SeriesAt("video", seed);
    c.Finish();
  }
  s.pstate = d.SeriesAt("pstate", seed);
  s.clock_event_reasons = d.SeriesAt("clock_event_reasons", seed);
  s.pcie_tx_kbps = d.SeriesAt("pcie_tx", seed).value_or(Series());
  s.pcie_rx_kbps = d.SeriesAt("pcie_rx", seed).value_or(Series());
  if (d.Has("ecc_errors")) {
    MapReader e(d.Get("ecc_errors"), "ecc_errors of " + where);
    s.ecc.corrected_volatile = e.SeriesAt("corrected_volatile", seed).value_or(Series());
    s.ecc.uncorrected_volatile = e.SeriesAt("uncorrected_volatile", seed).value_or(Series());
    s.ecc.corrected_aggregate = e.SeriesAt("corrected_aggregate", seed).value_or(Series());
    s.ecc.uncorrected_aggregate = e.SeriesAt("uncorrected_aggregate", seed).value_or(Series());
    e.Finish();
  }
  if (d.Has("remapped_rows")) {
    MapReader r(d.Get("remapped_rows"), "remapped_rows of " + where);
    s.remapped_rows.correctable = r.SeriesAt("correctable", seed).value_or(Series());
    s.remapped_rows.uncorrectable = r.SeriesAt("uncorrectable", seed).value_or(Series());
    s.remapped_rows.pending = r.Bool("pending").value_or(false);
    s.remapped_rows.failure = r.Bool("failure").value_or(false);
    r.Finish();
  }
  ReadXids(d, s);
  if (YAML::Node procs = d.Get("processes"); procs.IsDefined() && !procs.IsNull()) {
    if (!procs.IsSequence())
      throw ScenarioError(procs.Mark(), "processes must be a list in " + where);
    for (std::size_t i = 0; i < procs.size(); ++i) {
      s.processes.push_back(
          ParseProcess(procs[i], "process " + std::to_string(i) + " of " + where, nullptr));
    }
  }
  d.Finish();
  return s;
}

}  // namespace gpuwatch::fake_nvml
