#include "analysis/sweep/concurrency.h"

#include <fmt/format.h>

namespace gpuwatch::sweep {

ConcurrencyVerdict JudgeConcurrency(const std::vector<ConcurrencyLevel>& levels, double min_gain) {
  ConcurrencyVerdict v;
  const ConcurrencyLevel* best = nullptr;
  for (const auto& level : levels) {
    if (level.oom || level.failed) {
      const std::string what = level.oom ? "memory runs out" : "a copy fails";
      v.reason = best ? fmt::format("{} at {} copies", what, level.copies)
                      : fmt::format("{} already at {} {}", what, level.copies,
                                    level.copies == 1 ? "copy" : "copies");
      break;
    }
    if (best && level.total_throughput < best->total_throughput * (1 + min_gain)) {
      v.reason = fmt::format(
          "total throughput stops growing: {:.1f}/s at {} copies against {:.1f}/s at {} "
          "({:+.0f} %, under +{:.0f} %)",
          level.total_throughput, level.copies, best->total_throughput, best->copies,
          best->total_throughput > 0 ? 100 * (level.total_throughput / best->total_throughput - 1)
                                     : 0.0,
          100 * min_gain);
      break;
    }
    best = &level;
  }
  if (best) {
    v.holds = best->copies;
    if (v.reason.empty()) {
      v.reason = fmt::format("throughput still grows at {} copies, the most tried", best->copies);
    }
  }
  return v;
}

}  // namespace gpuwatch::sweep
