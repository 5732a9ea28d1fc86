#include "backends/nvml/plausibility.h"

#include <fmt/format.h>

namespace gpuwatch::nvml {
namespace {

template <typename Fields>
void RejectAbove(Fields& fields, FieldId id, double limit, std::string_view what) {
  Reading& r = fields[id];
  if (r.is_number() && (r.number() > limit || r.number() < 0)) {
    r = Reading::Absent(Missing::kImplausible,
                        fmt::format("{} {} is outside 0..{}", what, r.number(), limit));
  }
}

}  // namespace

void RejectImplausible(DeviceFields& f) {
  using F = FieldId;
  for (FieldId id : {F::kUtilizationGpuRatio, F::kUtilizationMemoryRatio,
                     F::kUtilizationEncoderRatio, F::kUtilizationDecoderRatio}) {
    RejectAbove(f, id, 1.0, "utilization ratio");
  }
  RejectAbove(f, F::kTemperatureGpuCelsius, 150.0, "GPU temperature");
  RejectAbove(f, F::kTemperatureMemoryCelsius, 150.0, "memory temperature");
  const Reading& total = f[F::kMemoryTotalBytes];
  if (total.is_number()) {
    RejectAbove(f, F::kMemoryUsedBytes, total.number(), "memory used");
    RejectAbove(f, F::kMemoryFreeBytes, total.number(), "memory free");
    if (!f[F::kMemoryUsedBytes].is_number()) {
      f[F::kMemoryUsedRatio] = f[F::kMemoryUsedBytes];
    }
  }
  const Reading& max_limit = f[F::kPowerLimitMaxWatts];
  const double power_ceiling = max_limit.is_number() ? 2.0 * max_limit.number() : 5000.0;
  for (FieldId id : {F::kPowerDrawWatts, F::kPowerDrawInstantWatts, F::kPowerDrawAverageWatts}) {
    RejectAbove(f, id, power_ceiling, "power draw (W)");
  }
  const std::pair<FieldId, FieldId> clocks[] = {
      {F::kClockSmHertz, F::kClockSmMaxHertz},
      {F::kClockMemoryHertz, F::kClockMemoryMaxHertz},
      {F::kClockGraphicsHertz, F::kClockGraphicsMaxHertz}};
  for (const auto& [now, max] : clocks) {
    if (f[max].is_number()) RejectAbove(f, now, 1.5 * f[max].number(), "clock (Hz)");
  }
}

void RejectImplausible(ProcessFields& f) {
  using F = FieldId;
  for (FieldId id : {F::kProcessSmUtilizationRatio, F::kProcessMemoryUtilizationRatio,
                     F::kProcessEncoderUtilizationRatio, F::kProcessDecoderUtilizationRatio}) {
    RejectAbove(f, id, 1.0, "process utilization ratio");
  }
}

}  // namespace gpuwatch::nvml
