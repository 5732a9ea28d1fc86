// Rule conditions: comparisons of a field with a number, joined by `and`,
// `or`, `not` and parentheses:
//
//   memory_used_ratio > 90%
//   utilization_gpu_ratio < 30% and process_count > 0
//   not (temperature_gpu_celsius <= 80C or throttle_thermal == 0)
//
// Evaluation is three-valued: a comparison on a missing (N/A) value is
// unknown, `and`/`or`/`not` follow Kleene logic, and only a true result fires
// or clears a rule. So a missing value never fires a rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/rules/field_ref.h"
#include "gpuwatch/status.h"

namespace gpuwatch::rules {

enum class CompareOp : std::uint8_t {
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kEqual,
  kNotEqual
};
std::string_view CompareOpText(CompareOp op);

enum class Truth : std::uint8_t { kFalse, kTrue, kUnknown };

struct Condition {
  enum class Kind : std::uint8_t { kCompare, kAnd, kOr, kNot };
  Kind kind = Kind::kCompare;
  // kCompare
  FieldRef field;
  CompareOp op = CompareOp::kGreater;
  double threshold = 0;        // in the field's base unit
  std::string threshold_text;  // as written ("90%")
  // kAnd, kOr: two or more; kNot: one
  std::vector<Condition> children;

  Truth Evaluate(const EvalContext& ctx) const;
  std::string ToString() const;
  // The first field compared, depth first: the value an event reports.
  const FieldRef& PrimaryField() const;
  // Calls f(const FieldRef&) for every field compared.
  template <typename F>
  void ForEachField(F&& f) const {
    if (kind == Kind::kCompare) f(field);
    for (const Condition& c : children) c.ForEachField(f);
  }
};

Condition Negate(Condition c);

// Parses `text` for a rule of `scope`. On error, *error_offset is the byte
// offset in `text` the message is about.
Result<Condition> ParseCondition(std::string_view text, RuleScope scope, std::size_t* error_offset);

}  // namespace gpuwatch::rules
