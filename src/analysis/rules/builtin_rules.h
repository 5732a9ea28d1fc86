// The rules gpuwatch watches when no --rules file is given. Each is a row in
// the words of a rule file (conditions, clear conditions and messages in the
// rule language, parsed and checked as a file's are), built into rules without
// a YAML parser: `top` and `watch` start without one. docs/rules.md lists them;
// tests/analysis/rules/builtin_rules_test.cc checks that each, written as a
// rule file, parses to the same rule.
#pragma once

#include <chrono>
#include <span>
#include <string_view>

#include "analysis/rules/rule.h"

namespace gpuwatch::rules {

inline constexpr std::string_view kBuiltinSource = "builtin:defaults";

// One built-in rule as a rule file would write it. Empty `clear`: the
// negation of `condition`. Device scope; its action is `log`.
struct BuiltinRule {
  std::string_view name;
  std::string_view condition;
  std::chrono::seconds for_duration{0};
  std::string_view clear;
  std::chrono::seconds clear_for{0};
  Severity severity = Severity::kWarning;
  std::string_view message;
};
std::span<const BuiltinRule> BuiltinRuleRows();

RuleSet BuiltinRules();

}  // namespace gpuwatch::rules
