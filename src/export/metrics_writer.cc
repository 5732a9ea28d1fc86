#include "export/metrics_writer.h"

#include <fmt/format.h>

#include <cmath>

namespace gpuwatch::metrics {
namespace {

// Label values escape \\, " and newline; HELP text only \\ and newline.
std::string Escape(std::string_view v, bool quotes = true) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

}  // namespace

std::string_view UnitSuffix(std::string_view family) {
  // Longest first: _bytes_per_second is not a family in _second.
  for (std::string_view unit :
       {"bytes_per_second", "bytes", "seconds", "watts", "joules", "hertz", "celsius", "ratio"}) {
    if (family.size() > unit.size() + 1 && family.ends_with(unit) &&
        family[family.size() - unit.size() - 1] == '_') {
      return unit;
    }
  }
  return {};
}

void Writer::Add(std::string_view name, Type type, std::string_view help, const Labels& labels,
                 double value) {
  auto [it, fresh] = index_.try_emplace(std::string(name), families_.size());
  if (fresh) families_.push_back(Family{std::string(name), type, std::string(help), {}});
  std::string line(name);
  if (!labels.empty()) {
    line += '{';
    bool first = true;
    for (const auto& [k, v] : labels) {
      line += fmt::format("{}{}=\"{}\"", first ? "" : ",", k, Escape(v));
      first = false;
    }
    line += '}';
  }
  line += ' ';
  line += Number(value);
  families_[it->second].samples.push_back(std::move(line));
}

std::string Writer::Finish() const {
  std::string out = Families();
  if (format_ == MetricsFormat::kOpenMetrics) out += "# EOF\n";
  return out;
}

std::string Writer::Families() const {
  const bool om = format_ == MetricsFormat::kOpenMetrics;
  std::string out;
  for (const auto& f : families_) {
    std::string family = f.name;
    std::string_view type = "gauge";
    switch (f.type) {
      case Type::kGauge:
        break;
      case Type::kCounter:
        type = "counter";
        // OpenMetrics names the family without the _total of its samples.
        if (om && family.ends_with("_total")) family.resize(family.size() - 6);
        break;
      case Type::kInfo:
        if (om) {
          type = "info";
          if (family.ends_with("_info")) family.resize(family.size() - 5);
        }
        break;
      case Type::kUnknown:
        type = om ? "unknown" : "untyped";
        break;
    }
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family, Escape(f.help, false), family, type);
    if (om && f.type != Type::kInfo) {
      if (const std::string_view unit = UnitSuffix(family); !unit.empty())
        out += fmt::format("# UNIT {} {}\n", family, unit);
    }
    for (const auto& s : f.samples) {
      out += s;
      out += '\n';
    }
  }
  return out;
}

}  // namespace gpuwatch::metrics
