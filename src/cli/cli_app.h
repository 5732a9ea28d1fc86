// The gpuwatch command line as one CLI::App tree: every command adds itself
// (commands.h), then help, shell completion and the man page are derived from
// the finished tree (help_format.h, completion.h, manpage.h). main.cc builds
// it, parses and runs; tests build the same tree to check what is derived.
//
// Two executables share it. gpuwatch-full (main.cc) holds every command.
// gpuwatch (front_main.cc) holds only the one-shot commands (status, query,
// select), so it starts without loading the HTTP, TLS, SQLite, YAML and
// ncurses libraries the others need; for any other command, for help and for
// anything it cannot parse it executes gpuwatch-full with the same arguments
// (oneshot_app.h).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
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

// What BuildCli and the one-shot front share: the version, the common
// options and the status command on the root, then `add_commands` adds the
// subcommands. The caller derives help (ConfigureHelp) if it prints any.
using AddCommands = std::function<std::vector<Runner>(CLI::App&, const CommonArgs&)>;
std::unique_ptr<Cli> BuildCliWith(const AddCommands& add_commands);

// Parses argv (without the program name) into `cli`. Returns -1 when a
// command is ready to run (RunCli), else the exit status, after printing the
// help, version or usage error CLI11 asked for.
int ParseCli(Cli& cli, const std::vector<std::string>& argv);

// ParseCli, but what went wrong goes to `failed`, which prints what it
// wants and returns the exit status: CLI11's ParseError (help, version, a
// usage error; `message` its text) or, with nullptr, gpuwatch's own usage
// error. -1 when a command is ready to run.
using ParseFailed = std::function<int(const CLI::ParseError* cli11, const std::string& message)>;
int ParseCliWith(Cli& cli, const std::vector<std::string>& argv, const ParseFailed& failed);

// Runs the command ParseCli found.
int RunCli(Cli& cli);

}  // namespace gpuwatch::cli
