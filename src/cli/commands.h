// The commands. Each adds its subcommand (or, for status, its options on the
// main app) and returns a function that runs it after parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.h"
#include "gpuwatch/status.h"

namespace gpuwatch::cli {

using Runner = std::function<int()>;

Runner AddStatusCommand(CLI::App& app, const CommonArgs& common);
Runner AddQueryCommand(CLI::App& app, const CommonArgs& common);
Runner AddDoctorCommand(CLI::App& app, const CommonArgs& common);
Runner AddWatchCommand(CLI::App& app, const CommonArgs& common);
Runner AddRunCommand(CLI::App& app, const CommonArgs& common);
Runner AddSweepCommand(CLI::App& app, const CommonArgs& common);
Runner AddReportCommand(CLI::App& app, const CommonArgs& common);
Runner AddServeCommand(CLI::App& app, const CommonArgs& common);
Runner AddSelectCommand(CLI::App& app, const CommonArgs& common);

// The command line as CLI11 gets it, and what it must not see.
struct Arguments {
  std::vector<std::string> options;  // for CLI11, in order
  // Everything after the first "--", untouched: a job's argv (`run`). CLI11
  // would let an option with an optional value (`--wait [TIMEOUT]`) swallow
  // the "--" and then parse the job's own options ("--lr") as gpuwatch's.
  std::optional<std::vector<std::string>> command;
};

// Splits argv at the first "--" and rewrites nvidia-smi's multi-letter
// single-dash options (-lms) to their long gpuwatch spelling. A long option
// with nothing after its '=' ("--query-gpu=") is an InvalidArgument naming
// it: CLI11 would take the next argument as its value.
Result<Arguments> NormalizeArgs(int argc, char** argv);

}  // namespace gpuwatch::cli
