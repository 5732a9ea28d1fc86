#include "yaml_reader.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "units.h"

namespace gpuwatch::fake_nvml {

std::optional<double> PlainNumber(const std::string& text) { return ParseNumber(text); }
std::optional<double> SizeBytes(const std::string& text) { return ParseSizeBytes(text); }
std::optional<double> DurationSeconds(const std::string& text) {
  return ParseDurationSeconds(text);
}

std::string ScalarText(const YAML::Node& node, const std::string& where, const char* what) {
  if (!node.IsScalar()) {
    throw ScenarioError(node.Mark(), std::string("expected ") + what + " in " + where);
  }
  return node.Scalar();
}

double ReadScalar(const YAML::Node& node, const std::string& where, const ScalarParser& parse,
                  const char* what) {
  const std::string text = ScalarText(node, where, what);
  auto value = parse(text);
  if (!value) {
    throw ScenarioError(node.Mark(), "'" + text + "' is not " + std::string(what) + " in " + where);
  }
  return *value;
}

MapReader::MapReader(const YAML::Node& node, std::string where)
    : node_(node), where_(std::move(where)) {
  if (!node_.IsMap()) throw ScenarioError(node_.Mark(), "expected a map in " + where_);
}

bool MapReader::Has(const std::string& key) const {
  for (const auto& entry : node_) {
    if (entry.first.Scalar() == key) return true;
  }
  return false;
}

YAML::Node MapReader::Get(const std::string& key) {
  used_.insert(key);
  for (const auto& entry : node_) {
    if (entry.first.Scalar() == key) return entry.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::optional<std::string> MapReader::String(const std::string& key) {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  return ScalarText(n, "'" + key + "' of " + where_, "a string");
}

std::optional<double> MapReader::Number(const std::string& key, const ScalarParser& parse,
                                        const char* what) {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  return ReadScalar(n, "'" + key + "' of " + where_, parse, what);
}

std::optional<bool> MapReader::Bool(const std::string& key) {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  const std::string text = ScalarText(n, "'" + key + "' of " + where_, "true or false");
  if (text == "true" || text == "yes" || text == "on" || text == "Enabled") return true;
  if (text == "false" || text == "no" || text == "off" || text == "Disabled") return false;
  throw ScenarioError(n.Mark(),
                      "'" + text + "' is not true or false in '" + key + "' of " + where_);
}

std::optional<Series> MapReader::SeriesAt(const std::string& key, std::uint64_t seed,
                                          const ScalarParser& parse) {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  return ReadSeries(n, "'" + key + "' of " + where_, HashString(key.c_str(), seed), parse);
}

void MapReader::Finish() const {
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (used_.count(key) == 0) {
      throw ScenarioError(entry.first.Mark(), "unknown key '" + key + "' in " + where_);
    }
  }
}

namespace {

// GPUWATCH_FAKE_NOISE_SEED=n (n >= 1) gives every series other noise
// than its scenario's (the leak evaluation's --seeds); unset or 0:
// the scenario's own.
std::uint64_t Salted(std::uint64_t seed, const YAML::Node& node) {
  const char* text = std::getenv("GPUWATCH_FAKE_NOISE_SEED");
  if (text == nullptr || *text == '\0') return seed;
  char* end = nullptr;
  const unsigned long long salt = std::strtoull(text, &end, 10);
  if (*end != '\0' || *text == '-') {
    throw ScenarioError(
        node.Mark(),
        std::string("GPUWATCH_FAKE_NOISE_SEED must be a number >= 0, not '") + text + "'");
  }
  return salt == 0 ? seed : HashString("noise seed", seed ^ (salt * 0x9E3779B97F4A7C15ull));
}

}  // namespace

Series ReadSeries(const YAML::Node& node, const std::string& where, std::uint64_t seed,
                  const ScalarParser& parse) {
  seed = Salted(seed, node);
  Series series;
  series.SetSeed(seed);
  if (node.IsScalar()) {
    series.AddConstant(ReadScalar(node, where, parse, "a valid value"));
    return series;
  }
  MapReader map(node, where);
  bool any_shape = false;
  if (auto c = map.Number("constant", parse, "a valid value")) {
    series.AddConstant(*c);
    any_shape = true;
  }
  if (map.Has("ramp")) {
    MapReader r(map.Get("ramp"), "ramp of " + where);
    Ramp ramp;
    ramp.from = r.Number("from", parse, "a valid value").value_or(0);
    auto per_s = r.Number("per_s", parse, "a valid value");
    auto per_min = r.Number("per_min", parse, "a valid value");
    auto per_h = r.Number("per_h", parse, "a valid value");
    if (int(per_s.has_value()) + int(per_min.has_value()) + int(per_h.has_value()) != 1) {
      throw ScenarioError(r.node().Mark(),
                          "ramp of " + where + " needs exactly one of per_s, per_min, per_h");
    }
    ramp.per_s = per_s ? *per_s : per_min ? *per_min / 60.0 : *per_h / 3600.0;
    ramp.max = r.Number("max", parse, "a valid value");
    r.Finish();
    series.AddRamp(ramp);
    any_shape = true;
  }
  if (map.Has("sawtooth")) {
    MapReader r(map.Get("sawtooth"), "sawtooth of " + where);
    Sawtooth saw;
    saw.low = r.Number("low", parse, "a valid value").value_or(0);
    saw.high = r.Number("high", parse, "a valid value").value_or(0);
    saw.period_s = r.Number("period", DurationSeconds, "a duration").value_or(60);
    saw.phase_s = r.Number("phase", DurationSeconds, "a duration").value_or(0);
    if (saw.period_s <= 0) throw ScenarioError(r.node().Mark(), "period must be > 0 in " + where);
    r.Finish();
    series.AddSawtooth(saw);
    any_shape = true;
  }
  if (map.Has("sine")) {
    MapReader r(map.Get("sine"), "sine of " + where);
    Sine sine;
    sine.mean = r.Number("mean", parse, "a valid value").value_or(0);
    sine.amplitude = r.Number("amplitude", parse, "a valid value").value_or(0);
    sine.period_s = r.Number("period", DurationSeconds, "a duration").value_or(60);
    sine.phase_s = r.Number("phase", DurationSeconds, "a duration").value_or(0);
    if (sine.period_s <= 0) throw ScenarioError(r.node().Mark(), "period must be > 0 in " + where);
    r.Finish();
    series.AddSine(sine);
    any_shape = true;
  }
  if (map.Has("steps")) {
    YAML::Node steps = map.Get("steps");
    if (!steps.IsSequence() || steps.size() == 0) {
      throw ScenarioError(steps.Mark(), "steps of " + where + " must be a list of [t, value]");
    }
    std::vector<std::pair<double, double>> points;
    for (const auto& step : steps) {
      if (!step.IsSequence() || step.size() != 2) {
        throw ScenarioError(step.Mark(), "a step of " + where + " must be [t, value]");
      }
      points.emplace_back(ReadScalar(step[0], "steps of " + where, DurationSeconds, "a time"),
                          ReadScalar(step[1], "steps of " + where, parse, "a valid value"));
    }
    std::stable_sort(points.begin(), points.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    series.SetSteps(std::move(points));
    any_shape = true;
  }
  std::uint64_t noise_seed = seed;
  if (auto s = map.Number("seed")) noise_seed = Salted(static_cast<std::uint64_t>(*s), node);
  if (auto noise = map.Number("noise", parse, "a valid value")) {
    series.SetNoise(*noise, noise_seed);
  }
  map.Finish();
  if (!any_shape) {
    throw ScenarioError(node.Mark(), where + " needs one of constant, ramp, sawtooth, sine, steps");
  }
  return series;
}

}  // namespace gpuwatch::fake_nvml
