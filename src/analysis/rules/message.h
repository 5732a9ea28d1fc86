// Alert message templates: text with {placeholders}. `{{` and `}}` are
// literal braces. Placeholders: {rule} {severity} {gpu} {value} (the first
// field of the condition, formatted in its unit) {condition}, and any field
// name the rule may use ({temperature_gpu_celsius}); process rules also have
// {pid} {user} {command} {process} (the process name).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analysis/rules/field_ref.h"
#include "gpuwatch/status.h"

namespace gpuwatch::rules {

struct Rule;

// Checks `tmpl` for a rule of `scope`; on error *error_offset is the offset
// of the bad placeholder.
Status CheckTemplate(std::string_view tmpl, RuleScope scope, std::size_t* error_offset);

// The template a rule gets when it has no `message`.
std::string DefaultTemplate(RuleScope scope);

// The catalogue fields a checked template's placeholders read ({value}, the
// condition's first field, is the condition's).
FieldMask TemplateFields(std::string_view tmpl, RuleScope scope);

// Renders a checked template. N/A values are written "N/A"; control
// characters (from {command}, say) are written out (core/printable.h).
std::string Render(const Rule& rule, const EvalContext& ctx);

}  // namespace gpuwatch::rules
