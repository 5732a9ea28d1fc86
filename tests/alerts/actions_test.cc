#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>

#include "../analysis/rules/test_snapshots.h"
#include "alerts/action_runner.h"
#include "alerts/event_json.h"
#include "analysis/rules/rule_parser.h"
#include "export/lines.h"
#include "runner_util.h"

namespace gpuwatch::alerts {
namespace {

using rules::ParseOptions;
using rules::ParseRules;

using testing::Lines;
using testing::Options;

namespace fs = std::filesystem;

// A temporary directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpuwatch-rules-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path operator/(std::string_view name) const { return path_ / name; }

 private:
  fs::path path_;
};

RuleSet Rules(const std::string& actions, bool allow_commands = false) {
  Result<RuleSet> set = ParseRules(
      "rules:\n  - name: mem\n    condition: memory_used_ratio > 90%\n    actions: " + actions +
          "\n",
      "t.yaml", ParseOptions{.allow_commands = allow_commands});
  EXPECT_TRUE(set) << set.error().message();
  return set ? std::move(*set) : RuleSet{};
}

Event Firing(int gpu = 0, std::string source = "mem") {
  Event e;
  e.time = rules::testing::At(0);
  e.kind = Event::Kind::kAlertFiring;
  e.severity = Severity::kWarning;
  e.source = std::move(source);
  e.gpu = gpu;
  e.value = 0.95;
  e.message = "GPU " + std::to_string(gpu) + ": memory 95.0%";
  return e;
}

std::vector<std::string> ReadLines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(EventJson, HasTheDocumentedFields) {
  Event e = Firing(3);
  e.process = ProcessKey{42, 7};
  nlohmann::json j = nlohmann::json::parse(EventJson(e, "node1"));
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["kind"], "alert_firing");
  EXPECT_EQ(j["rule"], "mem");
  EXPECT_EQ(j["severity"], "warning");
  EXPECT_EQ(j["time"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(j["host"], "node1");
  EXPECT_EQ(j["gpu"], 3);
  EXPECT_EQ(j["process"]["pid"], 42);
  EXPECT_EQ(j["process"]["start_ticks"], 7);
  EXPECT_EQ(j["value"], 0.95);
  EXPECT_EQ(j["message"], "GPU 3: memory 95.0%");
  // One event JSON: every key of the JSON Lines / API event is there, with its value.
  const nlohmann::json common = EventToJson(e);
  for (const auto& [key, value] : common.items()) EXPECT_EQ(j[key], value) << key;
  // Version 1's keys come first, in their documented order.
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(EventJson(e, "node1"));
  std::vector<std::string> keys;
  for (const auto& item : ordered.items()) keys.push_back(item.key());
  keys.resize(10);
  EXPECT_EQ(keys, (std::vector<std::string>{"version", "kind", "rule", "severity", "time", "host",
                                            "gpu", "process", "value", "message"}));
  e.process.reset();
  e.value.reset();
  j = nlohmann::json::parse(EventJson(e, "node1"));
  EXPECT_TRUE(j["process"].is_null());
  EXPECT_TRUE(j["value"].is_null());
}

TEST(ActionRunner, FileActionAppendsOneJsonLinePerEvent) {
  TempDir dir;
  fs::path file = dir / "alerts.jsonl";
  std::ofstream(file) << "{\"earlier\":true}\n";
  {
    auto runner = ActionRunner::Create(Rules("[{file: " + file.string() + "}]"), Options());
    ASSERT_TRUE(runner) << runner.error().message();
    (*runner)->Submit(Firing(0));
    (*runner)->Submit(Firing(1));
    (*runner)->Stop();
    EXPECT_EQ((*runner)->stats().delivered, 2u);
  }
  std::vector<std::string> lines = ReadLines(file);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "{\"earlier\":true}");
  EXPECT_EQ(nlohmann::json::parse(lines[1])["gpu"], 0);
  EXPECT_EQ(nlohmann::json::parse(lines[2])["gpu"], 1);
}

TEST(ActionRunner, UnwritableFileFailsAtCreateWithTheRuleLocation) {
  auto runner = ActionRunner::Create(Rules("[{file: /nonexistent/dir/a.jsonl}]"), Options());
  ASSERT_FALSE(runner);
  EXPECT_NE(runner.error().message().find("t.yaml:2:5"), std::string::npos)
      << runner.error().message();
  EXPECT_NE(runner.error().message().find("/nonexistent/dir/a.jsonl"), std::string::npos);
}

TEST(ActionRunner, LogActionWritesALineThroughTheSink) {
  Lines log;
  auto runner = ActionRunner::Create(Rules("[log]"), Options(log.Sink()));
  ASSERT_TRUE(runner);
  (*runner)->Submit(Firing(2));
  (*runner)->Stop();
  std::vector<std::string> lines = log.Get();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("ALERT warning mem: GPU 2: memory 95.0%"), std::string::npos) << lines[0];
}

TEST(ActionRunner, LogActionLineIsOneLineWithoutEscapes) {
  Lines log;
  auto runner = ActionRunner::Create(Rules("[log]"), Options(log.Sink()));
  ASSERT_TRUE(runner);
  Event e = Firing(2);
  e.message = "GPU 2: \x1b[31mred\nsecond line";
  (*runner)->Submit(e);
  (*runner)->Stop();
  std::vector<std::string> lines = log.Get();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("ALERT warning mem: GPU 2: \\x1b[31mred\\nsecond line"),
            std::string::npos)
      << lines[0];
}

TEST(ActionRunner, EventsOfOtherSourcesAreIgnored) {
  Lines log;
  auto runner = ActionRunner::Create(Rules("[log]"), Options(log.Sink()));
  ASSERT_TRUE(runner);
  (*runner)->Submit(Firing(0, "leak"));
  (*runner)->Stop();
  EXPECT_TRUE(log.Get().empty());
}

TEST(ActionRunner, FullQueueDropsTheOldestAndCountsIt) {
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::mutex mu;
  std::vector<std::string> delivered;
  bool first = true;
  LogSink sink = [&](std::string_view line) {
    std::lock_guard lock(mu);
    delivered.emplace_back(line);
    if (first) {
      first = false;
      entered.set_value();
      mu.unlock();
      released.wait();  // the worker is stuck on the first event
      mu.lock();
    }
  };
  auto runner = ActionRunner::Create(Rules("[log]"), Options(sink, false, 2));
  ASSERT_TRUE(runner);
  (*runner)->Submit(Firing(0));
  entered.get_future().wait();
  for (int gpu = 1; gpu <= 4; ++gpu) (*runner)->Submit(Firing(gpu));  // never blocks
  EXPECT_EQ((*runner)->stats().dropped, 2u);
  release.set_value();
  (*runner)->Stop();
  std::lock_guard lock(mu);
  std::vector<std::string> alerts;
  bool warned = false;
  for (const std::string& l : delivered) {
    if (l.find("ALERT") != std::string::npos) alerts.push_back(l);
    warned = warned || l.find("2 event(s) dropped") != std::string::npos;
  }
  ASSERT_EQ(alerts.size(), 3u);
  EXPECT_NE(alerts[1].find("GPU 3"), std::string::npos) << "GPU 1 and 2 were the oldest";
  EXPECT_NE(alerts[2].find("GPU 4"), std::string::npos);
  EXPECT_TRUE(warned);
}

TEST(ActionRunner, StopDeliversEverythingQueued) {
  TempDir dir;
  fs::path file = dir / "a.jsonl";
  auto runner = ActionRunner::Create(Rules("[{file: " + file.string() + "}]"), Options());
  ASSERT_TRUE(runner);
  for (int i = 0; i < 100; ++i) (*runner)->Submit(Firing(i));
  runner->reset();  // destructor stops
  EXPECT_EQ(ReadLines(file).size(), 100u);
}

TEST(ActionRunner, CommandActionIsRefusedUnlessAllowed) {
  RuleSet rules = Rules("[{command: [\"true\"]}]", /*allow_commands=*/true);
  auto refused = ActionRunner::Create(rules, Options({}, false));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("--allow-commands"), std::string::npos);
}

TEST(ActionRunner, CommandActionRunsTheProgramWithTheEventInItsEnvironment) {
  TempDir dir;
  fs::path out = dir / "out.txt";
  RuleSet rules = Rules(
      "[{command: [sh, -c, 'printf \"%s|%s|%s\" \"$GPUWATCH_RULE\" \"$GPUWATCH_GPU\" "
      "\"$GPUWATCH_KIND\" > " +
          out.string() + "']}]",
      /*allow_commands=*/true);
  auto runner = ActionRunner::Create(rules, Options({}, true));
  ASSERT_TRUE(runner) << runner.error().message();
  (*runner)->Submit(Firing(5));
  (*runner)->Stop();
  EXPECT_EQ((*runner)->stats().delivered, 1u);
  std::vector<std::string> lines = ReadLines(out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "mem|5|alert_firing");
}

TEST(ActionRunner, FailingCommandLogsOneWarning) {
  Lines log;
  RuleSet rules = Rules("[{command: [\"false\"]}]", true);
  auto runner = ActionRunner::Create(rules, Options(log.Sink(), true));
  ASSERT_TRUE(runner);
  (*runner)->Submit(Firing(0));
  (*runner)->Stop();
  EXPECT_EQ((*runner)->stats().failed, 1u);
  std::vector<std::string> lines = log.Get();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("exited with status 1"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace gpuwatch::alerts
