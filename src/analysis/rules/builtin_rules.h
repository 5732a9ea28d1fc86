// The rules gpuwatch watches when no --rules file is given. They are written
// in the rule file language (BuiltinRulesYaml) and parsed like any file, so
// `docs/rules.md` can show them verbatim and a user can copy and edit them.
#pragma once

#include <string_view>

#include "analysis/rules/rule.h"

namespace gpuwatch::rules {

inline constexpr std::string_view kBuiltinSource = "builtin:defaults";

std::string_view BuiltinRulesYaml();
RuleSet BuiltinRules();

}  // namespace gpuwatch::rules
