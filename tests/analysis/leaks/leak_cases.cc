#include "leak_cases.h"

namespace gpuwatch::leaks::eval {

const std::vector<LeakCase>& AllCases() {
  static const std::vector<LeakCase> kCases = {
      {"leak_linear", "linear leak, 100 MiB/min under a 3 GiB sawtooth", 10, 4 * 3600, 0.0, 41101,
       100},
      {"leak_slow", "slow leak, 1 MiB/min, 30 s samples", 30, 6 * 3600, 0.0, 42001, 1},
      {"leak_stepwise", "stepwise leak, +1 GiB every 15 min from 30 min", 10, 5 * 3600, 1800.0,
       43001, 1024.0 / 15},
      {"leak_bursty", "bursty leak, 24 irregular bursts from 20 min", 10, 5 * 3600, 1200.0, 44001,
       45.2},
      {"quiet_warmup_plateau", "warm-up 10 -> 30 GiB in 20 min, then flat", 10, 4 * 3600,
       std::nullopt, std::nullopt, 0},
      {"quiet_caching_allocator", "caching allocator fills 70 GiB in 3 min, then flat", 10,
       4 * 3600, std::nullopt, std::nullopt, 0},
      {"quiet_eval_spikes", "+20 % evaluation spike 1 min every 10 min", 10, 4 * 3600, std::nullopt,
       std::nullopt, 0},
      {"quiet_sawtooth", "plain sawtooth 30 -> 60 GiB", 10, 6 * 3600, std::nullopt, std::nullopt,
       0},
      {"quiet_steps_stop", "4 steps of 4 GiB in 21 min, then flat", 10, 5 * 3600, std::nullopt,
       std::nullopt, 0},
  };
  return kCases;
}

}  // namespace gpuwatch::leaks::eval
