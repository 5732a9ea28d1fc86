// Strict reading of scenario YAML: every map is read through a MapReader that
// remembers which keys were used, so an unknown key is an error that names its
// line and column. Errors are thrown as ScenarioError and turned into one
// message at the parser's entry point (scenario_parser.cc); nothing else in
// the library throws.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "series.h"

namespace gpuwatch::fake_nvml {

class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(const YAML::Mark& mark, const std::string& message)
      : std::runtime_error(message), mark_(mark) {}
  const YAML::Mark& mark() const { return mark_; }

 private:
  YAML::Mark mark_;
};

// Parses one scalar; std::nullopt when it is not valid.
using ScalarParser = std::function<std::optional<double>(const std::string&)>;

// Value parsers for the units a key accepts.
std::optional<double> PlainNumber(const std::string& text);
std::optional<double> SizeBytes(const std::string& text);
std::optional<double> DurationSeconds(const std::string& text);

class MapReader {
 public:
  // `node` must be a map (else a ScenarioError); `where` names it in messages
  // ("device 3", "fault 0").
  MapReader(const YAML::Node& node, std::string where);

  bool Has(const std::string& key) const;
  // The value node; marks the key as used. Undefined node when absent.
  YAML::Node Get(const std::string& key);

  std::optional<std::string> String(const std::string& key);
  std::optional<double> Number(const std::string& key, const ScalarParser& parse = PlainNumber,
                               const char* what = "a number");
  std::optional<bool> Bool(const std::string& key);
  // A series (number or map of shapes), seeded for noise with `seed`.
  std::optional<Series> SeriesAt(const std::string& key, std::uint64_t seed,
                                 const ScalarParser& parse = PlainNumber);

  // Throws for the first key (in document order) that was never read.
  void Finish() const;

  const std::string& where() const { return where_; }
  const YAML::Node& node() const { return node_; }

 private:
  YAML::Node node_;
  std::string where_;
  std::set<std::string> used_;
};

// Reads a series node: a scalar, or a map of shapes plus optional noise.
Series ReadSeries(const YAML::Node& node, const std::string& where, std::uint64_t seed,
                  const ScalarParser& parse);

// Scalar text of `node`, or a ScenarioError naming `what` was expected.
std::string ScalarText(const YAML::Node& node, const std::string& where, const char* what);
double ReadScalar(const YAML::Node& node, const std::string& where, const ScalarParser& parse,
                  const char* what);

}  // namespace gpuwatch::fake_nvml
