// The runs of `gpuwatch sweep`: the command once per value (or N copies at
// once), each a fresh process group with GPUWATCH_SWEEP_VALUE, {bs}
// substituted in its argv and its own GPUWATCH_SOCKET, its output captured
// to a file; stopped when every copy has sent `steps` step marks or after
// `seconds`. While it runs one sampler (owned here, on its thread) gives the
// peak NVML memory of each copy's process tree and of the device.
// Single-threaded use; docs/sweep.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/sweep/sweep_result.h"
#include "engine/source.h"
#include "sampler/sampler.h"

namespace gpuwatch::engine {

inline constexpr const char* kSweepPlaceholder = "{bs}";

struct SweepRunOptions {
  std::vector<std::string> command;        // argv, {bs} where the value goes
  std::map<std::string, std::string> env;  // added (CUDA_VISIBLE_DEVICES, ...)
  int gpu = 0;                             // the NVML index the runs use
  std::uint64_t steps = 50;                // step marks per copy; 0: no step bound
  std::chrono::milliseconds seconds{20'000};
  std::chrono::milliseconds interval{100};  // between samples
  std::filesystem::path proc_dir = "/proc";
  std::filesystem::path work_dir;  // where outputs are kept (a private directory)
};

// argv with every "{bs}" replaced by `value`.
std::vector<std::string> SubstituteValue(const std::vector<std::string>& argv, long value);
bool HasPlaceholder(const std::vector<std::string>& argv);

class SweepRunner {
 public:
  // Starts sampling `source`; an error when the GPU does not answer or
  // `options.gpu` is not one of its GPUs.
  static Result<std::unique_ptr<SweepRunner>> Start(Source source, SweepRunOptions options);
  ~SweepRunner();

  // The GPU before any run: its name, total memory, and what is free for the
  // job (total less what others use).
  const std::string& gpu_name() const { return gpu_name_; }
  double total_bytes() const { return total_bytes_; }
  double free_bytes() const { return free_bytes_; }

  // Runs `copies` copies with `value` (0: the command takes none) to their
  // bound; `stop` is polled every 50 ms (non-zero: end the run now, its
  // value becomes the result's `interrupted`).
  sweep::RunRecord Run(long value, int copies, const std::function<int()>& stop);
  int interrupted() const { return interrupted_; }

 private:
  SweepRunner(std::unique_ptr<Sampler> sampler, SweepRunOptions options);
  SweepRunOptions options_;
  std::unique_ptr<Sampler> sampler_;
  std::string gpu_name_;
  double total_bytes_ = 0;
  double free_bytes_ = 0;
  int interrupted_ = 0;
  int run_number_ = 0;
};

}  // namespace gpuwatch::engine
