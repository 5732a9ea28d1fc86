#include "analysis/rules/message.h"

#include <fmt/format.h>

#include <array>

#include "analysis/rules/quantity.h"
#include "analysis/rules/rule.h"
#include "core/printable.h"

namespace gpuwatch::rules {
namespace {

constexpr std::array kCommon = {std::string_view("rule"), std::string_view("severity"),
                                std::string_view("gpu"), std::string_view("value"),
                                std::string_view("condition")};
constexpr std::array kProcess = {std::string_view("pid"), std::string_view("user"),
                                 std::string_view("command"), std::string_view("process")};

template <std::size_t N>
bool In(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

// Calls text(std::string_view) for literal runs and name(std::string_view,
// offset) for placeholders. Returns false (and the offset) on an unbalanced
// brace.
template <typename Text, typename Name>
bool Walk(std::string_view t, Text&& text, Name&& name, std::size_t* error_offset) {
  std::size_t i = 0;
  while (i < t.size()) {
    char c = t[i];
    if ((c == '{' || c == '}') && i + 1 < t.size() && t[i + 1] == c) {
      text(t.substr(i, 1));
      i += 2;
    } else if (c == '{') {
      std::size_t close = t.find('}', i);
      if (close == std::string_view::npos) {
        *error_offset = i;
        return false;
      }
      if (!name(t.substr(i + 1, close - i - 1), i)) return false;
      i = close + 1;
    } else if (c == '}') {
      *error_offset = i;
      return false;
    } else {
      std::size_t next = t.find_first_of("{}", i);
      if (next == std::string_view::npos) next = t.size();
      text(t.substr(i, next - i));
      i = next;
    }
  }
  return true;
}

std::string Formatted(std::optional<double> v, Unit unit) {
  return v ? FormatValue(*v, unit) : std::string("N/A");
}

}  // namespace

Status CheckTemplate(std::string_view tmpl, RuleScope scope, std::size_t* error_offset) {
  std::string bad;
  bool ok = Walk(
      tmpl, [](std::string_view) {},
      [&](std::string_view name, std::size_t offset) {
        if (In(kCommon, name) || (scope == RuleScope::kProcess && In(kProcess, name)) ||
            FindRuleField(name, scope)) {
          return true;
        }
        *error_offset = offset;
        bad = std::string(name);
        return false;
      },
      error_offset);
  if (ok) return Status::Ok();
  if (bad.empty()) {
    return Status::InvalidArgument("unbalanced brace in message (write {{ or }} for a brace)");
  }
  std::string names = "rule, severity, gpu, value, condition";
  if (scope == RuleScope::kProcess) names += ", pid, user, command, process";
  if (In(kProcess, bad)) {
    return Status::InvalidArgument(fmt::format("placeholder {{{}}} needs 'scope: process'", bad));
  }
  return Status::InvalidArgument(
      fmt::format("unknown placeholder {{{}}} in message; use {} or a field name", bad, names));
}

std::string DefaultTemplate(RuleScope scope) {
  return scope == RuleScope::kDevice
             ? "GPU {gpu}: {condition} (now {value})"
             : "GPU {gpu}: process {pid} ({user}: {command}): {condition} (now {value})";
}

FieldMask TemplateFields(std::string_view tmpl, RuleScope scope) {
  FieldMask m;
  std::size_t ignored = 0;
  Walk(
      tmpl, [](std::string_view) {},
      [&](std::string_view name, std::size_t) {
        if (std::optional<FieldRef> f = FindRuleField(name, scope)) m |= SourceFields(*f);
        return true;
      },
      &ignored);
  return m;
}

std::string Render(const Rule& rule, const EvalContext& ctx) {
  std::string out;
  std::size_t ignored = 0;
  const ProcessSample* p = ctx.process;
  Walk(
      rule.message, [&](std::string_view s) { out += s; },
      [&](std::string_view name, std::size_t) {
        if (name == "rule") {
          out += rule.name;
        } else if (name == "severity") {
          out += SeverityName(rule.severity);
        } else if (name == "gpu") {
          out += std::to_string(ctx.device->index);
        } else if (name == "value") {
          const FieldRef& f = rule.condition.PrimaryField();
          out += Formatted(ValueOf(f, ctx), f.unit());
        } else if (name == "condition") {
          out += rule.condition.ToString();
        } else if (name == "pid") {
          out += p ? std::to_string(p->pid) : "N/A";
        } else if (name == "user") {
          out += p && !p->host.user.empty() ? p->host.user : "?";
        } else if (name == "command") {
          out += p && !p->host.command.empty() ? p->host.command : "?";
        } else if (name == "process") {
          out += p && !p->host.name.empty() ? p->host.name : "?";
        } else if (std::optional<FieldRef> f = FindRuleField(name, rule.scope)) {
          out += Formatted(ValueOf(*f, ctx), f->unit());
        }
        return true;
      },
      &ignored);
  // {command} and {process} are anyone's text; so, after YAML escapes, is the
  // template: the message reaches logs, terminals and webhooks as one line.
  return Printable(out);
}

}  // namespace gpuwatch::rules
