// The gpuwatch command line as one CLI::App tree: every command adds itself
// (commands.h), then help, shell completion and the man page are derived from
// the finished tree (help_format.h, completion.h, manpage.h). main.cc builds
// it, parses and runs; tests build the same tree to check what is derived.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace gpuwatch::cli {

// Owns the tree and what its options are bound to; the runners refer to
// `common`, so a Cli never moves (BuildCli hands out a unique_ptr).
struct Cli {
  CLI::App app{"gpuwatch: what every GPU and every process holds, now and over time", "gpuwatch"};
  CommonArgs common;
  CLI::App* version = nullptr;
  std::vector<Runner> runners;  // each -1 when its command was not given
  Runner status;                // no subcommand
  // What applying the value hints said (help_values.h): not ok when a hint
  // names an option that is gone; help works regardless, help_test fails.
  Status help_hints;
};

std::unique_ptr<Cli> BuildCli();

// Parses argv (without the program name) into `cli`. Returns -1 when a
// command is ready to run (RunCli), else the exit status, after printing the
// help, version or usage error CLI11 asked for.
int ParseCli(Cli& cli, const std::vector<std::string>& argv);

// Runs the command ParseCli found.
int RunCli(Cli& cli);

}  // namespace gpuwatch::cli
