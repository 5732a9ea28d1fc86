// `gpuwatch completion SHELL`: bash, zsh and fish completion scripts derived
// from the CLI::App tree (help_option.h), so a new command or option is
// completed without touching this file: subcommands, each command's options
// and the global ones, fixed choices, files and directories.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gpuwatch/status.h"

namespace gpuwatch::cli {

std::vector<std::string> CompletionShells();  // bash, zsh, fish

// The script for `shell`; InvalidArgument naming it for any other shell.
Result<std::string> CompletionScript(const CLI::App& root, std::string_view shell);

std::string BashCompletion(const CLI::App& root);
std::string ZshCompletion(const CLI::App& root);
std::string FishCompletion(const CLI::App& root);

}  // namespace gpuwatch::cli
