// The flags that configure a command's pipeline (engine/pipeline.h).
#pragma once

#include <CLI/CLI.hpp>

#include "engine/pipeline.h"

namespace gpuwatch::cli {

using engine::Pipeline;
using engine::PipelineOptions;

// --csv, --jsonl, --db, --rules, --allow-commands and --leak-window on a command.
void AddPipelineOptions(CLI::App& command, PipelineOptions& options);

}  // namespace gpuwatch::cli
