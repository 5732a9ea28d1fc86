// The commands. Each adds its subcommand (or, for status, its options on the
// main app) and returns a function that runs it after parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "cli/context.h"

namespace gpuwatch::cli {

using Runner = std::function<int()>;

Runner AddStatusCommand(CLI::App& app, const CommonArgs& common);
Runner AddQueryCommand(CLI::App& app, const CommonArgs& common);
Runner AddDoctorCommand(CLI::App& app, const CommonArgs& common);
Runner AddWatchCommand(CLI::App& app, const CommonArgs& common);
Runner AddRunCommand(CLI::App& app, const CommonArgs& common);
Runner AddReportCommand(CLI::App& app, const CommonArgs& common);
Runner AddServeCommand(CLI::App& app, const CommonArgs& common);
Runner AddSelectCommand(CLI::App& app, const CommonArgs& common);

// Rewrites nvidia-smi's multi-letter single-dash options (-lms) to their long
// gpuwatch spelling before CLI11 sees them.
std::vector<std::string> NormalizeArgs(int argc, char** argv);

}  // namespace gpuwatch::cli
