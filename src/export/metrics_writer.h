// The exposition writer behind /metrics: families in the order they were first
// written, each with HELP, TYPE and (OpenMetrics) UNIT, then its samples.
// Knows both formats' framing rules; knows nothing of GPUs. Pure.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuwatch {

enum class MetricsFormat { kPrometheus, kOpenMetrics };

namespace metrics {

// kUnknown: a monotonic value whose name cannot carry _total (dcgm-exporter's
// counters): `untyped` in text 0.0.4, `unknown` in OpenMetrics, same sample name.
enum class Type { kGauge, kCounter, kInfo, kUnknown };

using Labels = std::vector<std::pair<std::string_view, std::string>>;

// The unit a family's name ends with (_bytes_per_second, _bytes, _seconds,
// _watts, _joules, _hertz, _celsius, _ratio), "" when none: written as
// OpenMetrics `# UNIT`, whose rule is that the family name ends in _<unit>.
std::string_view UnitSuffix(std::string_view family);

class Writer {
 public:
  explicit Writer(MetricsFormat format) : format_(format) {}

  // `name` as samples are written: counters end in _total, info in _info.
  void Add(std::string_view name, Type type, std::string_view help, const Labels& labels,
           double value);
  // The families, then (OpenMetrics) `# EOF`.
  std::string Finish() const;
  // The families alone: a document's first part, which another writer's
  // Finish() ends.
  std::string Families() const;

 private:
  struct Family {
    std::string name;
    Type type = Type::kGauge;
    std::string help;
    std::vector<std::string> samples;
  };
  MetricsFormat format_;
  std::vector<Family> families_;
  std::map<std::string, std::size_t> index_;
};

}  // namespace metrics
}  // namespace gpuwatch
