#include "scenario_parser.h"

#include <yaml-cpp/yaml.h>

#include <string_view>

#include "backends/nvml/nvml_symbols.h"
#include "core/text_file.h"
#include "device_parser.h"
#include "nvml_errors.h"
#include "yaml_reader.h"

namespace gpuwatch::fake_nvml {
namespace {

#define GPUWATCH_FAKE_NVML_NAME(name, ret, params) #name,
constexpr std::string_view kSymbolNames[] = {GPUWATCH_NVML_SYMBOLS(GPUWATCH_FAKE_NVML_NAME)};
#undef GPUWATCH_FAKE_NVML_NAME

std::string CallName(const YAML::Node& node, const std::string& where) {
  const std::string name = ScalarText(node, where, "an NVML function name");
  for (std::string_view known : kSymbolNames) {
    if (known == name) return name;
  }
  throw ScenarioError(node.Mark(), "unknown NVML function '" + name + "' in " + where);
}

int ErrorCode(const YAML::Node& node, const std::string& where) {
  const std::string name = ScalarText(node, where, "an NVML error name");
  if (auto code = ErrorCodeFromName(name)) return *code;
  throw ScenarioError(node.Mark(), "unknown NVML error '" + name + "' in " + where +
                                       " (e.g. DRIVER_NOT_LOADED, GPU_IS_LOST, UNKNOWN)");
}

std::string Where(const std::string& file, const YAML::Mark& mark) {
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

FaultSpec ParseFault(const YAML::Node& node, std::size_t index, const Scenario& scenario) {
  const std::string where = "fault " + std::to_string(index);
  MapReader r(node, where);
  FaultSpec f;
  f.where = Where(scenario.path, node.Mark());
  if (auto d = r.Number("device")) {
    if (*d < 0 || *d >= static_cast<double>(scenario.devices.size())) {
      throw ScenarioError(r.Get("device").Mark(), "device " + r.Get("device").Scalar() + " of " +
                                                      where + " does not exist (" +
                                                      std::to_string(scenario.devices.size()) +
                                                      " devices)");
    }
    f.device = static_cast<unsigned>(*d);
  }
  f.from_s = r.Number("from", DurationSeconds, "a duration").value_or(0);
  f.until_s = r.Number("until", DurationSeconds, "a duration");
  int kinds = 0;
  if (auto lost = r.Bool("lost")) {
    f.kind = FaultKind::kLost;
    kinds += *lost ? 1 : 0;
  }
  if (YAML::Node ns = r.Get("not_supported"); ns.IsDefined()) {
    f.kind = FaultKind::kNotSupported;
    if (!ns.IsSequence())
      throw ScenarioError(ns.Mark(), "not_supported must be a list in " + where);
    for (const auto& call : ns) f.calls.push_back(CallName(call, where));
    ++kinds;
  }
  auto call_fault = [&](const char* key, FaultKind kind) {
    if (!r.Has(key)) return;
    MapReader c(r.Get(key), std::string(key) + " of " + where);
    f.kind = kind;
    YAML::Node call = c.Get("call");
    if (!call.IsDefined())
      throw ScenarioError(c.node().Mark(), "'call' is required in " + c.where());
    f.calls.push_back(CallName(call, c.where()));
    if (kind == FaultKind::kError) {
      YAML::Node code = c.Get("code");
      if (!code.IsDefined())
        throw ScenarioError(c.node().Mark(), "'code' is required in " + c.where());
      f.code = ErrorCode(code, c.where());
    } else {
      f.ms = c.Number("ms").value_or(kind == FaultKind::kHang ? 3600.0 * 1000 : 100);
    }
    c.Finish();
    ++kinds;
  };
  call_fault("error", FaultKind::kError);
  call_fault("slow", FaultKind::kSlow);
  call_fault("hang", FaultKind::kHang);
  if (r.Has("process_list_race")) {
    MapReader c(r.Get("process_list_race"), "process_list_race of " + where);
    f.kind = FaultKind::kProcessListRace;
    const double extra = c.Number("extra").value_or(1);
    if (!(extra >= 0 && extra <= 4096)) {
      throw ScenarioError(c.Get("extra").Mark(), "'extra' of " + c.where() + " must be 0..4096");
    }
    f.extra = static_cast<unsigned>(extra);
    c.Finish();
    ++kinds;
  }
  if (kinds != 1) {
    throw ScenarioError(node.Mark(), where +
                                         " needs exactly one of lost, not_supported, error, "
                                         "slow, hang, process_list_race");
  }
  r.Finish();
  return f;
}

void CheckMigProcesses(const DeviceSpec& d, const YAML::Node& node) {
  if (!d.mig_enabled) return;
  for (const ProcessSpec& p : d.processes) {
    bool found = false;
    for (const MigInstanceSpec& inst : d.mig_instances) {
      found = found || (p.gi == inst.gi && p.ci.value_or(0) == inst.ci);
    }
    if (!found) {
      throw ScenarioError(node.Mark(), "process " + std::to_string(p.pid) +
                                           " needs the gi/ci of an existing MIG instance");
    }
  }
}

Scenario ParseRoot(const YAML::Node& root, const std::string& name) {
  Scenario s;
  s.path = name;
  MapReader r(root, "the top level");
  if (auto v = r.String("driver_version")) s.driver_version = *v;
  if (auto v = r.String("nvml_version")) s.nvml_version = *v;
  if (auto v = r.Number("cuda_driver_version")) {
    // Range first: casting a double beyond int's range is undefined.
    if (!(*v >= 0 && *v <= 1e9)) {
      throw ScenarioError(r.Get("cuda_driver_version").Mark(),
                          "'cuda_driver_version' must be between 0 and 1000000000");
    }
    s.cuda_driver_version = static_cast<int>(*v);
  }
  if (YAML::Node e = r.Get("init_error"); e.IsDefined()) s.init_error = ErrorCode(e, "init_error");
  if (YAML::Node c = r.Get("clock"); c.IsDefined()) {
    const std::string mode = ScalarText(c, "clock", "init or wall");
    if (mode == "init") {
      s.clock = ClockMode::kInit;
    } else if (mode == "wall") {
      s.clock = ClockMode::kWall;
    } else {
      throw ScenarioError(c.Mark(), "clock must be init or wall, not '" + mode + "'");
    }
  }
  s.period_s = r.Number("period", DurationSeconds, "a duration").value_or(s.period_s);
  if (auto v = r.Number("time_scale")) {
    // 0 would freeze the clock, a negative scale run it backwards.
    if (!(*v > 0)) {
      throw ScenarioError(r.Get("time_scale").Mark(),
                          "time_scale must be > 0 (scenario seconds per real second), not " +
                              r.Get("time_scale").Scalar());
    }
    s.time_scale = *v;
  }
  if (s.period_s <= 0) throw ScenarioError(r.Get("period").Mark(), "period must be > 0");
  YAML::Node devices = r.Get("devices");
  if (devices.IsDefined() && !devices.IsNull()) {
    if (!devices.IsSequence()) throw ScenarioError(devices.Mark(), "devices must be a list");
    for (std::size_t i = 0; i < devices.size(); ++i) {
      s.devices.push_back(ParseDevice(devices[i], static_cast<unsigned>(i)));
    }
  }
  if (YAML::Node procs = r.Get("processes"); procs.IsDefined() && !procs.IsNull()) {
    if (!procs.IsSequence()) throw ScenarioError(procs.Mark(), "processes must be a list");
    for (std::size_t i = 0; i < procs.size(); ++i) {
      std::optional<unsigned> device;
      ProcessSpec p = ParseProcess(procs[i], "process " + std::to_string(i), &device);
      if (*device >= s.devices.size()) {
        throw ScenarioError(procs[i].Mark(), "process " + std::to_string(p.pid) + " is on device " +
                                                 std::to_string(*device) +
                                                 ", which does not exist");
      }
      s.devices[*device].processes.push_back(std::move(p));
    }
  }
  for (std::size_t i = 0; i < s.devices.size(); ++i) CheckMigProcesses(s.devices[i], devices[i]);
  if (YAML::Node faults = r.Get("faults"); faults.IsDefined() && !faults.IsNull()) {
    if (!faults.IsSequence()) throw ScenarioError(faults.Mark(), "faults must be a list");
    for (std::size_t i = 0; i < faults.size(); ++i) s.faults.push_back(ParseFault(faults[i], i, s));
  }
  r.Finish();
  return s;
}

}  // namespace

LoadResult ParseScenarioText(const std::string& text, const std::string& name) {
  LoadResult result;
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    result.scenario = ParseRoot(root, name);
  } catch (const ScenarioError& e) {
    result.error = Where(name, e.mark()) + ": " + e.what();
  } catch (const YAML::Exception& e) {
    result.error = Where(name, e.mark) + ": " + e.msg;
  }
  return result;
}

LoadResult LoadScenarioFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text) return LoadResult{std::nullopt, "scenario file " + text.error().message()};
  return ParseScenarioText(*text, path);
}

}  // namespace gpuwatch::fake_nvml
