#include "analysis/rules/rule_parser.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>
#include <vector>

#include "analysis/rules/message.h"
#include "analysis/rules/quantity.h"
#include "analysis/rules/yaml_document.h"
#include "core/text_file.h"
#include "gpuwatch/units.h"

namespace gpuwatch::rules {
namespace {

constexpr std::size_t kNoOffset = std::string_view::npos;
constexpr std::string_view kTopKeys = "version, rules";
constexpr std::string_view kRuleKeys =
    "name, condition, for, clear, clear_for, severity, scope, message, actions";
constexpr std::string_view kWebhookKeys = "url, timeout, retries, backoff";
constexpr std::string_view kCommandKeys = "argv, timeout";

bool ListHas(std::string_view list, std::string_view key) {
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t end = list.find(", ", pos);
    if (end == std::string_view::npos) end = list.size();
    if (list.substr(pos, end - pos) == key) return true;
    pos = end + 2;
  }
  return false;
}

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) {
      return false;
    }
  }
  return true;
}

class RuleFileParser {
 public:
  RuleFileParser(std::string_view text, std::string_view file, const ParseOptions& options)
      : text_(text), file_(file), options_(options) {}

  Result<RuleSet> Parse() {
    // yaml-cpp reports misuse (a key looked up in a scalar) by exceptions; the
    // checks below should prevent all of them, this keeps a miss an error.
    try {
      return ParseUnguarded();
    } catch (const YAML::Exception& e) {
      return At(e.mark, e.msg);
    }
  }

 private:
  Result<RuleSet> ParseUnguarded() {
    // Silently reading only the first would drop every rule after the '---'.
    if (Status s = CheckOneDocument(text_, file_,
                                    "a rule file is one document; put every rule in its one "
                                    "'rules:' list");
        !s.ok()) {
      return s;
    }
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text_));
    } catch (const YAML::ParserException& e) {
      return At(e.mark, e.msg);
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument(fmt::format("{}: {}", file_, e.what()));
    }
    if (!root.IsMap()) {
      if (root.IsNull()) {
        return Status::InvalidArgument(
            fmt::format("{}:1:1: empty rule file: expected a 'rules:' list", file_));
      }
      return Error(root, "a rule file is a map with a 'rules:' list");
    }
    RuleSet set;
    set.source = file_;
    if (Status s = CheckKeys(root, kTopKeys, "top level"); !s.ok()) return s;
    if (YAML::Node v = root["version"]; v) {
      if (!v.IsScalar() || v.Scalar() != "1") return Error(v, "unsupported version: write 1");
    }
    YAML::Node rules = root["rules"];
    if (!rules) return Error(root, "missing 'rules:' (a list of rules)");
    if (rules.IsNull()) return set;
    if (!rules.IsSequence()) return Error(rules, "'rules' must be a list of rules");
    std::set<std::string> names;
    for (const YAML::Node& node : rules) {
      Result<Rule> rule = ParseRule(node);
      if (!rule) return rule.status();
      if (!names.insert(rule->name).second) {
        return Error(node["name"], fmt::format("duplicate rule name '{}'", rule->name));
      }
      set.rules.push_back(std::move(*rule));
    }
    return set;
  }

  Location Where(const YAML::Mark& mark) const {
    return Location{std::string(file_), mark.line + 1, mark.column + 1};
  }

  Status At(const YAML::Mark& mark, const std::string& msg) const {
    if (mark.is_null()) return Status::InvalidArgument(fmt::format("{}: {}", file_, msg));
    return Status::InvalidArgument(fmt::format("{}: {}", Where(mark).ToString(), msg));
  }

  // An error about `node`; `offset` points inside a scalar when it is known.
  Status Error(const YAML::Node& node, const std::string& msg,
               std::size_t offset = kNoOffset) const {
    YAML::Mark mark = node.Mark();
    if (!mark.is_null() && offset != kNoOffset && node.IsScalar()) {
      auto pos = static_cast<std::size_t>(mark.pos);
      std::size_t start = pos;
      if (pos < text_.size() && (text_[pos] == '"' || text_[pos] == '\'')) ++start;
      const std::string& value = node.Scalar();
      // Only a scalar written on one line, as is, maps offsets to columns.
      if (text_.substr(start, value.size()) == value) {
        mark.column += static_cast<int>(start - pos + offset);
      }
    }
    return At(mark, msg);
  }

  Status CheckKeys(const YAML::Node& map, std::string_view valid, std::string_view what) const {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) return Error(it->first, "keys must be plain words");
      const std::string& key = it->first.Scalar();
      if (!ListHas(valid, key)) {
        return Error(it->first,
                     fmt::format("unknown key '{}' in {}; valid keys: {}", key, what, valid));
      }
      if (!seen.insert(key).second) {
        return Error(it->first, fmt::format("duplicate key '{}'", key));
      }
    }
    return Status::Ok();
  }

  Result<std::string> Scalar(const YAML::Node& node, std::string_view what) const {
    if (!node.IsScalar()) return Error(node, fmt::format("'{}' must be a single value", what));
    return node.Scalar();
  }

  Result<std::chrono::milliseconds> Duration(const YAML::Node& node, std::string_view what) const {
    Result<std::string> text = Scalar(node, what);
    if (!text) return text.status();
    Result<std::chrono::milliseconds> d = ParseDuration(*text);
    if (!d) return Error(node, fmt::format("'{}': {}", what, d.error().message()), 0);
    return d;
  }

  Result<Condition> ParseConditionNode(const YAML::Node& node, RuleScope scope,
                                       std::string_view what) const {
    Result<std::string> text = Scalar(node, what);
    if (!text) return text.status();
    std::size_t offset = 0;
    Result<Condition> c = ParseCondition(*text, scope, &offset);
    if (!c) return Error(node, fmt::format("'{}': {}", what, c.error().message()), offset);
    return c;
  }

  Result<Rule> ParseRule(const YAML::Node& node) const {
    if (!node.IsMap()) return Error(node, "a rule is a map with at least 'name' and 'condition'");
    if (Status s = CheckKeys(node, kRuleKeys, "a rule"); !s.ok()) return s;
    Rule rule;
    rule.where = Where(node.Mark());
    YAML::Node name = node["name"];
    if (!name) return Error(node, "rule without 'name'");
    Result<std::string> name_text = Scalar(name, "name");
    if (!name_text) return name_text.status();
    if (!ValidName(*name_text)) {
      return Error(name, "a rule name is letters, digits, '_', '-' or '.' (at most 128)");
    }
    rule.name = *name_text;

    if (YAML::Node scope = node["scope"]; scope) {
      Result<std::string> s = Scalar(scope, "scope");
      if (!s) return s.status();
      if (*s == "device") {
        rule.scope = RuleScope::kDevice;
      } else if (*s == "process") {
        rule.scope = RuleScope::kProcess;
      } else {
        return Error(scope, fmt::format("unknown scope '{}': use device or process", *s));
      }
    }
    YAML::Node condition = node["condition"];
    if (!condition) return Error(node, fmt::format("rule '{}' has no 'condition'", rule.name));
    Result<Condition> c = ParseConditionNode(condition, rule.scope, "condition");
    if (!c) return c.status();
    rule.condition = std::move(*c);
    if (YAML::Node clear = node["clear"]; clear) {
      Result<Condition> cl = ParseConditionNode(clear, rule.scope, "clear");
      if (!cl) return cl.status();
      rule.clear = std::move(*cl);
    } else {
      rule.clear = Negate(rule.condition);
    }
    if (YAML::Node f = node["for"]; f) {
      Result<std::chrono::milliseconds> d = Duration(f, "for");
      if (!d) return d.status();
      rule.for_duration = *d;
    }
    if (YAML::Node f = node["clear_for"]; f) {
      Result<std::chrono::milliseconds> d = Duration(f, "clear_for");
      if (!d) return d.status();
      rule.clear_for = *d;
    }
    if (YAML::Node sev = node["severity"]; sev) {
      Result<std::string> s = Scalar(sev, "severity");
      if (!s) return s.status();
      if (*s == "info") {
        rule.severity = Severity::kInfo;
      } else if (*s == "warning") {
        rule.severity = Severity::kWarning;
      } else if (*s == "critical") {
        rule.severity = Severity::kCritical;
      } else {
        return Error(sev, fmt::format("unknown severity '{}': use info, warning or critical", *s));
      }
    }
    if (YAML::Node msg = node["message"]; msg) {
      Result<std::string> m = Scalar(msg, "message");
      if (!m) return m.status();
      std::size_t offset = 0;
      if (Status s = CheckTemplate(*m, rule.scope, &offset); !s.ok()) {
        return Error(msg, s.message(), offset);
      }
      rule.message = *m;
    } else {
      rule.message = DefaultTemplate(rule.scope);
    }
    if (YAML::Node actions = node["actions"]; actions) {
      if (!actions.IsSequence()) return Error(actions, "'actions' must be a list");
      for (const YAML::Node& a : actions) {
        Result<Action> action = ParseAction(a);
        if (!action) return action.status();
        rule.actions.push_back(std::move(*action));
      }
    } else {
      rule.actions.emplace_back(LogAction{});
    }
    return rule;
  }

  Result<int> Count(const YAML::Node& node, std::string_view what, int max) const {
    Result<std::string> text = Scalar(node, what);
    if (!text) return text.status();
    int n = -1;
    auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (ec != std::errc() || ptr != text->data() + text->size() || n < 0 || n > max) {
      return Error(node, fmt::format("'{}' must be a whole number from 0 to {}", what, max));
    }
    return n;
  }

  Result<Action> ParseAction(const YAML::Node& node) const {
    if (node.IsScalar()) {
      if (node.Scalar() == "log") return Action{LogAction{}};
      return Error(node, fmt::format("unknown action '{}': use log, file, webhook or command",
                                     node.Scalar()));
    }
    if (!node.IsMap() || node.size() != 1) {
      return Error(node, "an action is 'log' or a map with one key: file, webhook or command");
    }
    const YAML::Node key = node.begin()->first;
    const YAML::Node value = node.begin()->second;
    const std::string kind = key.IsScalar() ? key.Scalar() : std::string();
    if (kind == "file") {
      Result<std::string> path = Scalar(value, "file");
      if (!path) return path.status();
      if (path->empty()) return Error(value, "'file' needs a path");
      return Action{FileAction{*path}};
    }
    if (kind == "webhook") return ParseWebhook(value);
    if (kind == "command") return ParseCommand(key, value);
    return Error(key, fmt::format("unknown action '{}': use log, file, webhook or command", kind));
  }

  Result<Action> ParseWebhook(const YAML::Node& value) const {
    WebhookAction w;
    // (yaml-cpp: assigning a Node writes through it, so pick by initialisation.)
    const YAML::Node url = value.IsMap() ? value["url"] : value;
    if (value.IsMap()) {
      if (Status s = CheckKeys(value, kWebhookKeys, "a webhook"); !s.ok()) return s;
      if (!url) return Error(value, "webhook without 'url'");
      if (YAML::Node t = value["timeout"]; t) {
        Result<std::chrono::milliseconds> d = Duration(t, "timeout");
        if (!d) return d.status();
        if (d->count() <= 0) return Error(t, "'timeout' must be more than 0");
        w.timeout = *d;
      }
      if (YAML::Node r = value["retries"]; r) {
        Result<int> n = Count(r, "retries", 10);
        if (!n) return n.status();
        w.retries = *n;
      }
      if (YAML::Node b = value["backoff"]; b) {
        Result<std::chrono::milliseconds> d = Duration(b, "backoff");
        if (!d) return d.status();
        w.backoff = *d;
      }
    }
    Result<std::string> u = Scalar(url, "url");
    if (!u) return u.status();
    std::string_view rest = *u;
    bool http = rest.starts_with("http://");
    bool https = rest.starts_with("https://");
    rest.remove_prefix(http ? 7 : (https ? 8 : 0));
    if ((!http && !https) || rest.empty() || rest.front() == '/') {
      return Error(url, "'url' must be http://host[:port]/path or https://...");
    }
    w.url = *u;
    return Action{std::move(w)};
  }

  Result<Action> ParseCommand(const YAML::Node& key, const YAML::Node& value) const {
    if (!options_.allow_commands) {
      return Error(key,
                   "command actions run programs and are off by default; pass "
                   "--allow-commands to enable them");
    }
    CommandAction c;
    const YAML::Node argv = value.IsMap() ? value["argv"] : value;
    if (value.IsMap()) {
      if (Status s = CheckKeys(value, kCommandKeys, "a command"); !s.ok()) return s;
      if (!argv) return Error(value, "command without 'argv'");
      if (YAML::Node t = value["timeout"]; t) {
        Result<std::chrono::milliseconds> d = Duration(t, "timeout");
        if (!d) return d.status();
        if (d->count() <= 0) return Error(t, "'timeout' must be more than 0");
        c.timeout = *d;
      }
    }
    if (!argv.IsSequence() || argv.size() == 0) {
      return Error(argv, "'command' is a list: [program, arg, ...] (no shell)");
    }
    for (const YAML::Node& arg : argv) {
      Result<std::string> a = Scalar(arg, "command argument");
      if (!a) return a.status();
      c.argv.push_back(*a);
    }
    if (c.argv.front().empty()) return Error(argv, "the program name is empty");
    return Action{std::move(c)};
  }

  std::string_view text_;
  std::string_view file_;
  ParseOptions options_;
};

}  // namespace

std::string Location::ToString() const { return fmt::format("{}:{}:{}", file, line, column); }

const Rule* RuleSet::Find(std::string_view name) const {
  for (const Rule& r : rules) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

Result<RuleSet> ParseRules(std::string_view text, std::string_view file_name,
                           const ParseOptions& options) {
  return RuleFileParser(text, file_name, options).Parse();
}

Result<RuleSet> LoadRuleFile(const std::string& path, const ParseOptions& options) {
  Result<std::string> text = ReadTextFile(path);
  if (!text) return text.error();
  return ParseRules(*text, path, options);
}

}  // namespace gpuwatch::rules
