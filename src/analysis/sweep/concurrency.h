// How many copies of a job one GPU holds: the copies' total throughput at
// each level of --concurrency, and the level after which it stops growing
// (the next adds less than `min_gain`) or memory runs out. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuwatch::sweep {

struct ConcurrencyLevel {
  int copies = 1;
  bool oom = false;                         // a copy ran out of memory
  bool failed = false;                      // a copy failed for another reason
  std::vector<double> per_copy_throughput;  // steps (or runs) per second
  double total_throughput = 0;
  double peak_device_bytes = 0;
};

struct ConcurrencyVerdict {
  std::optional<int> holds;  // none: not even the first level ran
  std::string reason;
};

ConcurrencyVerdict JudgeConcurrency(const std::vector<ConcurrencyLevel>& levels,
                                    double min_gain = 0.05);

}  // namespace gpuwatch::sweep
