// `gpuwatch run`'s flags and their checks (the command after --, the
// interval, the memory limit and its grace).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/claim_options.h"
#include "cli/context.h"
#include "cli/pipeline.h"
#include "engine/job_session.h"

namespace gpuwatch::cli {

struct RunArgs {
  std::string interval = "100ms";
  std::string gpus;
  ClaimOptions claim;
  std::string memory_limit;
  std::string grace = "10s";
  PipelineOptions outputs;
  std::string json;
  std::string report;
  bool quiet = false;
  bool require_gpu = false;
  std::vector<std::string> command;
};

void AddRunOptions(CLI::App& command, RunArgs& args);

// Checks what does not need the GPUs, and fills `job`'s command, interval,
// memory limit and grace. InvalidArgument names the flag.
Status CheckRunArgs(const CommonArgs& common, RunArgs& args, engine::JobOptions& job);

}  // namespace gpuwatch::cli
