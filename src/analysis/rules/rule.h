// A parsed rule set: what to watch (a condition held `for` a while), when to
// stand down (the `clear` condition held `clear_for`), how loud (severity)
// and whom to tell (actions). Values only: the engine evaluates them, the
// ActionRunner delivers their events.
#pragma once

#include <chrono>
#include <string>
#include <variant>
#include <vector>

#include "analysis/rules/condition.h"
#include "analysis/rules/field_ref.h"
#include "gpuwatch/event.h"

namespace gpuwatch::rules {

// Where something was written, 1-based ("rules.yaml:12:7").
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
  std::string ToString() const;
};

struct LogAction {};  // one line through the runner's log sink
struct FileAction {   // one JSON line per event, appended
  std::string path;
};
struct WebhookAction {  // HTTP POST of the event JSON
  std::string url;      // http://host[:port]/path or https://...
  std::chrono::milliseconds timeout{5000};
  int retries = 3;                          // attempts after the first
  std::chrono::milliseconds backoff{1000};  // doubles after each failure
};
struct CommandAction {  // a program, no shell; event in GPUWATCH_* variables
  std::vector<std::string> argv;
  std::chrono::milliseconds timeout{30000};  // then SIGKILL
};
using Action = std::variant<LogAction, FileAction, WebhookAction, CommandAction>;

struct Rule {
  std::string name;
  RuleScope scope = RuleScope::kDevice;
  Condition condition;
  Condition clear;  // default: not (condition)
  std::chrono::milliseconds for_duration{0};
  std::chrono::milliseconds clear_for{0};
  Severity severity = Severity::kWarning;
  std::string message;          // template; see message.h
  std::vector<Action> actions;  // default: log
  Location where;
};

struct RuleSet {
  std::string source;  // file name, or "builtin:defaults"
  std::vector<Rule> rules;
  const Rule* Find(std::string_view name) const;
};

}  // namespace gpuwatch::rules
