// What help, shell completion and the man page read off the CLI::App tree:
// the commands, their options, each option's value and default. One reading
// of the tree, so the three cannot disagree.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gpuwatch::cli {

// The group of the options every command accepts (AddCommonOptions), on the
// main app; subcommands accept them too (fallthrough) and list them under it.
inline constexpr const char* kGlobalOptionsGroup = "Global options";

struct OptionValue {
  enum class Kind { kNone, kText, kFile, kDirectory, kChoice };
  Kind kind = Kind::kNone;           // kNone: a flag
  std::string name;                  // what help calls it: TEXT, FILE, INT, ...
  std::vector<std::string> choices;  // kChoice: every value it takes
  bool optional = false;             // the value may be left out (--wait [TIMEOUT])
  bool repeatable = false;           // may be given more than once, or takes a list
};

// From the option's type name: "TEXT:{auto,always,never}" is a choice,
// ":FILE" (CLI::ExistingFile, or a hint, help_values.h) a file, ":DIR" a
// directory.
OptionValue ValueOf(const CLI::Option& option);

// The default worth showing, or "" when there is none: flags, empty strings,
// empty lists and unset optionals have none; neither does an option whose
// description already says its default.
std::string DefaultOf(const CLI::Option& option);

// "-i, --interval" (or the positional's name).
std::string NamesOf(const CLI::Option& option);

// The named options of `app` in definition order, help included; `group`
// empty for every group.
std::vector<const CLI::Option*> NamedOptions(const CLI::App& app, std::string_view group = {});
std::vector<const CLI::Option*> Positionals(const CLI::App& app);

// The options a command accepts besides its own: the main app's global ones.
std::vector<const CLI::Option*> GlobalOptions(const CLI::App& root);

// The subcommands, in definition order.
std::vector<const CLI::App*> Commands(const CLI::App& root);

}  // namespace gpuwatch::cli
