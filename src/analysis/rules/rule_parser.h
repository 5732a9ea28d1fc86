// Rule files (YAML, one document, docs/rules.md) into a RuleSet. Every error names the place
// as file:line:column (1-based) and says what would be valid there: an
// unknown field lists the valid field names, an unknown key the valid keys.
#pragma once

#include <string>
#include <string_view>

#include "analysis/rules/rule.h"
#include "gpuwatch/status.h"

namespace gpuwatch::rules {

struct ParseOptions {
  // Command actions run programs: refused unless the user opted in
  // (`--allow-commands`).
  bool allow_commands = false;
};

// `file_name` is only used in messages and RuleSet::source.
Result<RuleSet> ParseRules(std::string_view text, std::string_view file_name,
                           const ParseOptions& options = {});

// Reads and parses `path`: a regular file of at most 1 MiB (core/text_file.h;
// a directory, FIFO or device is refused by name). An unreadable file is
// kNotFound.
Result<RuleSet> LoadRuleFile(const std::string& path, const ParseOptions& options = {});

}  // namespace gpuwatch::rules
