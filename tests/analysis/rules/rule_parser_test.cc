#include "analysis/rules/rule_parser.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "analysis/rules/yaml_document.h"

namespace gpuwatch::rules {
namespace {

std::string ErrorOf(std::string_view yaml, ParseOptions options = {}) {
  Result<RuleSet> set = ParseRules(yaml, "r.yaml", options);
  EXPECT_FALSE(set) << yaml;
  return set ? std::string() : set.error().message();
}

TEST(YamlDocument, ASecondDocumentIsFoundOnItsLine) {
  // On the text, not through yaml-cpp's LoadAll, which looped without end on
  // an input rules_fuzzer found (past 2 GB).
  const std::pair<std::string, int> cases[] = {
      {"a: 1\n---\nb: 2\n", 2}, {"# c\n--- \na: 1\n---\n", 4},         {"a: 1\n...\nb: 2\n", 3},
      {"--- a\n--- b\n", 2},    {"%YAML 1.2\n---\na: 1\n---\nb\n", 4},
  };
  for (const auto& [text, line] : cases) {
    const Status s = CheckOneDocument(text, "f.yaml", "one only");
    EXPECT_EQ(s.message(),
              "f.yaml:" + std::to_string(line) + ":1: a second YAML document ('---'): one only")
        << text;
  }
  for (const std::string one : {"", "---\na: 1\n", "# c\n---\na: |\n  ---x\n", "a: 1\n...\n",
                                "a: '---'\nb: ---x\n", "---\n...\n"}) {
    EXPECT_TRUE(CheckOneDocument(one, "f.yaml", "one only").ok()) << one;
  }
}

TEST(RuleParser, ParsesEveryKey) {
  Result<RuleSet> set = ParseRules(R"(version: 1
rules:
  - name: big_process
    scope: process
    condition: used_memory_bytes > 8GiB
    clear: used_memory_bytes < 6GiB
    for: 30s
    clear_for: 1m
    severity: critical
    message: "{user} ({pid}) holds {value} on GPU {gpu}"
    actions:
      - log
      - file: /tmp/alerts.jsonl
      - webhook: {url: "http://127.0.0.1:9/hook", timeout: 2s, retries: 5, backoff: 100ms}
)",
                                   "r.yaml");
  ASSERT_TRUE(set) << set.error().message();
  ASSERT_EQ(set->rules.size(), 1u);
  const Rule& r = set->rules[0];
  EXPECT_EQ(r.name, "big_process");
  EXPECT_EQ(r.scope, RuleScope::kProcess);
  EXPECT_EQ(r.condition.ToString(), "used_memory_bytes > 8GiB");
  EXPECT_EQ(r.clear.ToString(), "used_memory_bytes < 6GiB");
  EXPECT_EQ(r.for_duration, std::chrono::seconds(30));
  EXPECT_EQ(r.clear_for, std::chrono::minutes(1));
  EXPECT_EQ(r.severity, Severity::kCritical);
  ASSERT_EQ(r.actions.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<LogAction>(r.actions[0]));
  EXPECT_EQ(std::get<FileAction>(r.actions[1]).path, "/tmp/alerts.jsonl");
  const auto& hook = std::get<WebhookAction>(r.actions[2]);
  EXPECT_EQ(hook.url, "http://127.0.0.1:9/hook");
  EXPECT_EQ(hook.timeout, std::chrono::seconds(2));
  EXPECT_EQ(hook.retries, 5);
  EXPECT_EQ(hook.backoff, std::chrono::milliseconds(100));
  EXPECT_EQ(r.where.ToString(), "r.yaml:3:5");
}

TEST(RuleParser, DefaultsAreDeviceScopeWarningLogAndNegatedClear) {
  Result<RuleSet> set =
      ParseRules("rules:\n  - name: hot\n    condition: temperature_gpu_celsius > 80\n", "r.yaml");
  ASSERT_TRUE(set) << set.error().message();
  const Rule& r = set->rules[0];
  EXPECT_EQ(r.scope, RuleScope::kDevice);
  EXPECT_EQ(r.severity, Severity::kWarning);
  EXPECT_EQ(r.for_duration.count(), 0);
  EXPECT_EQ(r.clear.ToString(), "not (temperature_gpu_celsius > 80)");
  ASSERT_EQ(r.actions.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<LogAction>(r.actions[0]));
}

TEST(RuleParser, DurationsReadAsEveryFlagDoes) {
  // One grammar (gpuwatch/units.h): a plain number is seconds, days and minutes too.
  Result<RuleSet> set = ParseRules(
      "rules:\n  - name: hot\n    condition: temperature_gpu_celsius > 80\n    for: 30\n"
      "    clear_for: 1d\n    actions:\n      - webhook: {url: \"http://127.0.0.1:9/h\", "
      "timeout: 2min}\n",
      "r.yaml");
  ASSERT_TRUE(set) << set.error().message();
  const Rule& r = set->rules[0];
  EXPECT_EQ(r.for_duration, std::chrono::seconds(30));
  EXPECT_EQ(r.clear_for, std::chrono::hours(24));
  ASSERT_EQ(r.actions.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<WebhookAction>(r.actions[0]));
  EXPECT_EQ(std::get<WebhookAction>(r.actions[0]).timeout, std::chrono::minutes(2));
}

struct BadFile {
  std::string_view yaml;
  std::string_view where;  // file:line:column
  std::string_view says;
};

class RuleFileErrors : public ::testing::TestWithParam<BadFile> {};

TEST_P(RuleFileErrors, NameFileLineColumnAndTheProblem) {
  std::string m = ErrorOf(GetParam().yaml);
  EXPECT_TRUE(m.starts_with(std::string(GetParam().where) + ":")) << m;
  EXPECT_NE(m.find(GetParam().says), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(
    RuleParser, RuleFileErrors,
    ::testing::Values(
        BadFile{"rules: [\n", "r.yaml:2:1", "end of sequence"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n  bad", "r.yaml:4:3",
                ""},
        BadFile{"", "r.yaml:1:1", "empty rule file"},
        BadFile{"- 1\n", "r.yaml:1:1", "'rules:' list"},
        BadFile{"version: 2\nrules: []\n", "r.yaml:1:10", "unsupported version"},
        BadFile{"rulez: []\n", "r.yaml:1:1",
                "unknown key 'rulez' in top level; valid keys: version, rules"},
        BadFile{"version: 1\n", "r.yaml:1:1", "missing 'rules:'"},
        BadFile{"rules: 3\n", "r.yaml:1:8", "must be a list"},
        BadFile{"rules:\n  - 3\n", "r.yaml:2:5", "a rule is a map"},
        BadFile{"rules:\n  - condition: memory_used_ratio > 0.9\n", "r.yaml:2:5", "without 'name'"},
        BadFile{"rules:\n  - name: a b\n    condition: memory_used_ratio > 0.9\n", "r.yaml:2:11",
                "a rule name is"},
        BadFile{"rules:\n  - name: a\n", "r.yaml:2:5", "has no 'condition'"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    sevrity: info\n",
                "r.yaml:4:5", "unknown key 'sevrity' in a rule; valid keys: name, condition"},
        BadFile{"rules:\n  - name: a\n    name: b\n    condition: memory_used_ratio > 0.9\n",
                "r.yaml:3:5", "duplicate key 'name'"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used > 0.9\n", "r.yaml:3:16",
                "unknown field 'memory_used'"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio >> 0.9\n", "r.yaml:3:35",
                "expected a number"},
        BadFile{"rules:\n  - name: a\n    condition: \"memory_used_ratio > 9\"\n", "r.yaml:3:37",
                "out of range for a ratio"},
        BadFile{"rules:\n  - name: a\n    condition: [1]\n", "r.yaml:3:16", "single value"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    clear: foo < 1\n",
                "r.yaml:4:12", "unknown field 'foo'"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    for: 30x\n",
                "r.yaml:4:10", "not a duration"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    for: 400d\n",
                "r.yaml:4:10", "too long"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    clear_for: x\n",
                "r.yaml:4:16", "not a duration"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    severity: loud\n",
                "r.yaml:4:15", "use info, warning or critical"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    scope: host\n",
                "r.yaml:4:12", "use device or process"},
        BadFile{
            "rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    message: hi {pid}\n",
            "r.yaml:4:17", "needs 'scope: process'"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    message: hi "
                "{bogus}\n",
                "r.yaml:4:17", "unknown placeholder {bogus}"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    message: hi {\n",
                "r.yaml:4:17", "unbalanced brace"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    actions: log\n",
                "r.yaml:4:14", "must be a list"},
        BadFile{
            "rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    actions: [email]\n",
            "r.yaml:4:15", "unknown action 'email'"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    actions: [{sms: "
                "x}]\n",
                "r.yaml:4:16", "unknown action 'sms'"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    actions: [{file: "
                "\"\"}]\n",
                "r.yaml:4:22", "needs a path"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    actions: "
                "[{webhook: ftp://x}]\n",
                "r.yaml:4:25", "must be http://"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    actions: "
                "[{webhook: {uri: http://x}}]\n",
                "r.yaml:4:26", "unknown key 'uri' in a webhook"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    actions: "
                "[{webhook: {url: http://x, retries: many}}]\n",
                "r.yaml:4:50", "whole number"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    actions: "
                "[{webhook: {url: http://x, timeout: 0s}}]\n",
                "r.yaml:4:50", "more than 0"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n    actions: "
                "[{command: [echo]}]\n",
                "r.yaml:4:16", "--allow-commands"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n  - name: a\n    "
                "condition: memory_used_ratio > 0.9\n",
                "r.yaml:4:11", "duplicate rule name 'a'"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n---\nrules:\n  - "
                "name: b\n    condition: memory_used_ratio > 0.5\n",
                "r.yaml:4:1", "a second YAML document ('---'): a rule file is one document"},
        BadFile{"---\nrules: []\n--- # the end\n", "r.yaml:3:1", "a second YAML document"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_bytes > 1e26GiB\n", "r.yaml:3:36",
                "unit 'e26GiB' does not fit here"},
        BadFile{"rules:\n  - name: a\n    condition: memory_used_bytes > "
                "100000000000000000000000000GiB\n",
                "r.yaml:3:36", "is too large: a size is at most 16 EiB"}));

TEST(RuleParser, UnknownFieldErrorListsEveryValidFieldName) {
  std::string m = ErrorOf("rules:\n  - name: a\n    condition: gpu_temp > 80\n");
  for (std::string_view name : ValidFieldNames(RuleScope::kDevice)) {
    EXPECT_NE(m.find(name), std::string::npos) << name << " missing from: " << m;
  }
}

TEST(RuleParser, CommandActionsParseOnlyWhenAllowed) {
  constexpr std::string_view kYaml =
      "rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n"
      "    actions: [{command: [notify-send, GPU]}, {command: {argv: [true], timeout: 2s}}]\n";
  EXPECT_FALSE(ParseRules(kYaml, "r.yaml"));
  Result<RuleSet> set = ParseRules(kYaml, "r.yaml", ParseOptions{.allow_commands = true});
  ASSERT_TRUE(set) << set.error().message();
  const auto& first = std::get<CommandAction>(set->rules[0].actions[0]);
  EXPECT_EQ(first.argv, (std::vector<std::string>{"notify-send", "GPU"}));
  EXPECT_EQ(std::get<CommandAction>(set->rules[0].actions[1]).timeout, std::chrono::seconds(2));
  EXPECT_NE(ErrorOf("rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n"
                    "    actions: [{command: []}]\n",
                    ParseOptions{.allow_commands = true})
                .find("is a list"),
            std::string::npos);
}

TEST(RuleParser, EmptyRuleListIsValid) {
  Result<RuleSet> set = ParseRules("rules: []\n", "r.yaml");
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_TRUE(set->rules.empty());
}

TEST(RuleParser, MissingFileIsNotFound) {
  Result<RuleSet> set = LoadRuleFile("/nonexistent/rules.yaml");
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().code(), Status::Code::kNotFound);
  EXPECT_EQ(set.error().message(),
            "cannot read /nonexistent/rules.yaml: No such file or directory");
}

TEST(RuleParser, OnlyARegularFileIsARuleFile) {
  const std::string dir = ::testing::TempDir() + "gw-rules-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const std::string fifo = dir + "/rules.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {dir, dir + " is a directory, not a regular file"},  // was "empty rule file"
      {fifo, fifo + " is a FIFO, not a regular file"},     // would wait for a writer
      {"/dev/zero", "/dev/zero is a character device, not a regular file"},  // would never end
  };
  for (const auto& [path, says] : cases) {
    Result<RuleSet> set = LoadRuleFile(path);
    ASSERT_FALSE(set) << path;
    EXPECT_EQ(set.error().message(), says);
  }
  unlink(fifo.c_str());
  rmdir(dir.c_str());
}

TEST(RuleParser, ShippedExampleFileParses) {
  Result<RuleSet> set = LoadRuleFile(GPUWATCH_SOURCE_DIR "/rules/examples.yaml",
                                     ParseOptions{.allow_commands = true});
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_GE(set->rules.size(), 3u);
}

}  // namespace
}  // namespace gpuwatch::rules
