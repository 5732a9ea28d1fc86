#include "core/unit_names.h"

#include <utility>

namespace gpuwatch::units {
namespace {

template <std::size_t N>
std::optional<double> Find(const std::pair<std::string_view, double> (&table)[N],
                           std::string_view name) {
  for (const auto& [unit, factor] : table) {
    if (unit == name) return factor;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> BytesPer(std::string_view name) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"B", 1},
      {"KiB", 1024.0},
      {"MiB", 1048576.0},
      {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0},
      {"KB", 1e3},
      {"kB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"TB", 1e12},
      {"K", 1024.0},
      {"M", 1048576.0},
      {"G", 1073741824.0},
      {"T", 1099511627776.0},
  };
  return Find(kUnits, name);
}

std::optional<double> MillisecondsPer(std::string_view name) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"min", 60e3}, {"h", 3600e3}, {"d", 86400e3}};
  return Find(kUnits, name);
}

}  // namespace gpuwatch::units
