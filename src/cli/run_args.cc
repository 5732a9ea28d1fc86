#include "cli/run_args.h"

#include <fmt/format.h>

#include "gpuwatch/units.h"

namespace gpuwatch::cli {

void AddRunOptions(CLI::App& command, RunArgs& args) {
  command.add_option("-i,--interval", args.interval,
                     "Time between samples (default 100ms, enough to catch spikes)");
  command.add_option(
      "--gpus", args.gpus,
      "Only these GPUs (indices or UUIDs), or auto:N: the N least busy, leased until "
      "the job ends (docs/select.md). Sets CUDA_VISIBLE_DEVICES in PCI order");
  AddClaimOptions(command, args.claim);
  command.add_option("--memory-limit", args.memory_limit,
                     "GPU memory budget of the job (e.g. 40GiB): warn at 90 %, SIGTERM at 100 %, "
                     "SIGKILL after --grace");
  command.add_option("--grace", args.grace,
                     "Time between SIGTERM and SIGKILL for --memory-limit (default 10s)");
  AddPipelineOptions(command, args.outputs);
  command.add_option("--json", args.json,
                     "Write the end-of-job summary as JSON to FILE (schema gpuwatch.run/1)");
  command.add_option(
      "--report", args.report,
      "Write the HTML report (charts, events, summary; one self-contained file) to FILE");
  command.add_flag("-q,--quiet", args.quiet,
                   "Print nothing of gpuwatch's own (the job's output is untouched)");
  command.add_flag(
      "--require-gpu", args.require_gpu,
      "Refuse to start the job when the GPUs cannot be monitored (no usable driver); by "
      "default it then runs unmonitored after a warning");
  command.add_option("command", args.command, "The job: a program and its arguments, after --")
      ->take_all();
}

Status CheckRunArgs(const CommonArgs& common, RunArgs& args, engine::JobOptions& job) {
  if (!common.replay.empty())
    return Status::InvalidArgument("--replay plays a recording; a job needs the GPUs themselves");
  if (common.command) {
    if (!args.command.empty()) {
      return Status::InvalidArgument(fmt::format(
          "\"{}\" comes before the --: put the whole command after it", args.command.front()));
    }
    args.command = *common.command;  // exactly what follows the first "--"
  }
  if (args.command.empty())
    return Status::InvalidArgument(
        "give the command to run after --, e.g. gpuwatch run -- python train.py");
  auto interval = ParseDuration(args.interval);
  if (!interval) return Status::InvalidArgument("--interval: " + interval.error().message());
  if (*interval < std::chrono::milliseconds(10))
    return Status::InvalidArgument("--interval: the shortest interval is 10ms");
  auto grace = ParseDuration(args.grace);
  if (!grace) return Status::InvalidArgument("--grace: " + grace.error().message());
  job.command = args.command;
  job.interval = *interval;
  job.grace = *grace;
  if (!args.memory_limit.empty()) {
    auto l = ParseSize(args.memory_limit);
    if (!l) return Status::InvalidArgument("--memory-limit: " + l.error().message());
    if (*l == 0) return Status::InvalidArgument("--memory-limit: must be more than 0");
    job.memory_limit = *l;
  }
  return Status::Ok();
}

}  // namespace gpuwatch::cli
