#include "engine/pipeline.h"

#include <fmt/format.h>

#include <charconv>

#include "analysis/rules/builtin_rules.h"
#include "analysis/rules/rule_parser.h"
#include "export/lines.h"
#include "gpuwatch/units.h"
#include "sampler/lifecycle.h"

namespace gpuwatch::engine {

Result<std::unique_ptr<Pipeline>> Pipeline::Open(const PipelineOptions& options, Warn warn) {
  std::unique_ptr<Pipeline> p(new Pipeline());
  p->options_ = options;
  if (!options.leak_window.empty()) {
    auto window = ParseDuration(options.leak_window);
    if (!window) return window.error().WithContext("--leak-window");
    if (*window < std::chrono::seconds(1) || *window > std::chrono::hours(1)) {
      return Status::InvalidArgument(
          fmt::format("--leak-window: {} is outside 1s .. 1h", options.leak_window));
    }
    p->leaks_ = leaks::LeakTracker(
        leaks::ScaledLeakOptions(std::chrono::duration_cast<std::chrono::seconds>(*window)));
  }
  rules::ParseOptions parse;
  parse.allow_commands = options.allow_commands;
  Result<rules::RuleSet> set = options.rules.empty() ? Result<rules::RuleSet>(rules::BuiltinRules())
                                                     : rules::LoadRuleFile(options.rules, parse);
  if (!set) return set.error().WithContext("--rules");
  alerts::ActionRunnerOptions action_options;
  action_options.allow_commands = options.allow_commands;
  if (options.log) action_options.log = options.log;
  auto runner = alerts::ActionRunner::Create(*set, std::move(action_options));
  if (!runner) return runner.error().WithContext("--rules");
  p->actions_ = std::move(*runner);
  p->engine_ = std::make_unique<rules::RuleEngine>(std::move(*set));
  if (!options.csv.empty()) {
    auto f = LineFile::Open(options.csv, warn);
    if (!f) return f.error().WithContext("--csv");
    p->csv_ = std::move(*f);
    p->csv_->Write(CsvHeader());
  }
  if (!options.jsonl.empty()) {
    auto f = LineFile::Open(options.jsonl, warn);
    if (!f) return f.error().WithContext("--jsonl");
    p->jsonl_ = std::move(*f);
  }
  if (!options.db.empty()) {
    auto w = HistoryOutput::Open(options.db, warn);
    if (!w) return w.error().WithContext("--db");
    p->db_ = std::move(*w);
  }
  return p;
}

Pipeline::~Pipeline() { Close(); }

FieldMask Pipeline::Fields() const {
  if (csv_ || jsonl_ || db_) return AllFields();
  return Diagnoser::Fields() | leaks::LeakTracker::Fields() | rules::FieldsRead(engine_->rules());
}

std::vector<Event> Pipeline::Observe(const std::shared_ptr<const Snapshot>& snap) {
  std::vector<Event> events = LifecycleEvents(previous_.get(), *snap);
  std::vector<Event> alerts = engine_->Evaluate(*snap);
  actions_->Submit(alerts);
  for (auto& e : alerts) events.push_back(std::move(e));
  for (auto& e : diagnoser_.Observe(*snap)) events.push_back(std::move(e));
  for (auto& e : leaks_.Observe(*snap)) events.push_back(std::move(e));
  if (csv_) {
    for (auto& row : CsvRows(*snap)) csv_->Write(std::move(row));
  }
  if (jsonl_) {
    if (!previous_) jsonl_->Write(JsonlHeader(*snap, options_.hostname));
    jsonl_->Write(JsonlSample(*snap));
  }
  if (db_) db_->Append(snap);
  for (const auto& e : events) Record(e);
  previous_ = snap;
  return events;
}

void Pipeline::Record(const Event& e) {
  if (jsonl_) jsonl_->Write(JsonlEvent(e));
  if (db_) db_->Append(e);
}

std::vector<Event> Pipeline::Mark(std::chrono::system_clock::time_point time,
                                  const std::string& kind, const std::string& value) {
  double number = 0;
  const bool numeric =
      std::from_chars(value.data(), value.data() + value.size(), number).ec == std::errc();
  Event e;
  e.time = time;
  e.kind = Event::Kind::kMark;
  e.source = kind;
  e.message = fmt::format("{} {}", kind, value);
  if (numeric) e.value = number;
  if (jsonl_) jsonl_->Write(JsonlEvent(e));
  if (db_)
    db_->AppendMark(time, kind, value, numeric ? std::optional<double>(number) : std::nullopt);
  std::vector<Event> out{std::move(e)};
  if (kind == "step" && numeric && number >= 0) {
    for (auto& leak : leaks_.ObserveStep(time, static_cast<std::uint64_t>(number))) {
      Record(leak);
      out.push_back(std::move(leak));
    }
  }
  return out;
}

std::vector<Event> Pipeline::Framework(std::chrono::system_clock::time_point time, int gpu,
                                       const std::string& framework,
                                       const std::map<std::string, double, std::less<>>& bytes,
                                       std::optional<std::uint32_t> pid) {
  if (jsonl_) jsonl_->Write(JsonlFramework(time, gpu, framework, bytes, pid));
  const auto allocated = bytes.find("allocated");
  if (allocated == bytes.end()) return {};
  std::vector<Event> events = leaks_.ObserveFramework(time, gpu, pid, framework, allocated->second);
  for (const auto& e : events) Record(e);
  return events;
}

void Pipeline::Close() {
  if (actions_) actions_->Stop();
  if (csv_) csv_->Close();
  if (jsonl_) jsonl_->Close();
  db_.reset();
}

}  // namespace gpuwatch::engine
