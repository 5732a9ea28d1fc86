// What the option definitions do not say about values and help, completion
// and the man page need: which options take a path (FILE, DIR) and which take
// one of a fixed set that the command checks itself. Stated once here,
// applied to the tree as type names, so help, completion and man agree.
#pragma once

#include <CLI/CLI.hpp>
#include <string_view>
#include <vector>

#include "gpuwatch/status.h"

namespace gpuwatch::cli {

struct ValueHint {
  std::string_view command;  // "" for the main app
  std::string_view option;   // its long name, "--csv", or a positional's name
  std::string_view value;    // "FILE", "DIR", or choices "{a,b,c}" ("{a|b,c}" when one has a comma)
};

std::vector<ValueHint> ValueHints();

// Applies ValueHints() to the tree. Hints naming a command or option that
// does not exist are left out and make an InvalidArgument naming each (help
// still works; help_test fails, so the table cannot rot). A command that
// takes anything (allow_extras) is left alone.
Status ApplyValueHints(CLI::App& root);

}  // namespace gpuwatch::cli
