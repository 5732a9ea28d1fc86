// `gpuwatch serve`'s options, and the YAML file (--config) that gives them:
// the flags' long names as keys; flags given on the command line win.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/pipeline.h"
#include "gpuwatch/status.h"

namespace gpuwatch::cli {

struct ServeArgs {
  std::string config;
  std::string web_config;
  std::string listen = "127.0.0.1:9835";
  std::string hostname;
  std::string interval = "1s";
  PipelineOptions outputs;
  bool process_metrics = false;
  bool process_user = false;
  bool dcgm_compat = false;
  bool nvidia_smi_compat = false;
  std::string socket;                    // serve --socket: jobs report framework memory and marks
  std::vector<std::string> allow_hosts;  // Host names accepted besides this server's own
};

// Reads `path` (a regular file of at most 1 MiB) into `a`, skipping the
// options `command` was given; errors name file:line:column and list the
// valid keys.
Status LoadConfig(const std::string& path, ServeArgs& a, const CLI::App& command);

}  // namespace gpuwatch::cli
