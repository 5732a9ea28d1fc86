// What `watch`, `run`, `serve` and the Python Monitor do with every snapshot: derive events
// (lifecycle, alert rules and their actions, diagnoses, leaks) and write every output asked for
// (CSV, JSON Lines, SQLite history). Outputs are opened up front, so a bad path fails before
// anything starts; writes never block (each output has its own writer thread).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "alerts/action_runner.h"
#include "analysis/diagnoses/diagnoses.h"
#include "analysis/leaks/leak_tracker.h"
#include "analysis/rules/engine.h"
#include "engine/history_output.h"
#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"
#include "transport/line_file.h"

namespace gpuwatch::engine {

struct PipelineOptions {
  std::string csv;
  std::string jsonl;
  std::string db;
  std::string rules;  // a rule file; empty: the built-in defaults
  bool allow_commands = false;
  std::string leak_window;  // --leak-window: the leak detector's finest floor window ("" = 5s)
  std::string hostname;
  // Where `log` actions write (alerts as they fire and resolve); default stderr.
  std::function<void(std::string_view)> log;
};

class Pipeline {
 public:
  using Warn = std::function<void(const std::string&)>;
  static Result<std::unique_ptr<Pipeline>> Open(const PipelineOptions& options, Warn warn);
  ~Pipeline();

  // One snapshot: returns the events it caused (already written out).
  std::vector<Event> Observe(const std::shared_ptr<const Snapshot>& snapshot);
  // An event from elsewhere (memory guard, ...), written out.
  void Record(const Event& event);
  // A mark from the training process (step / epoch / phase); returns it as
  // the event it was recorded as, followed by the leak events it caused (a
  // step mark judges the per-step series of framework memory).
  std::vector<Event> Mark(std::chrono::system_clock::time_point time, const std::string& kind,
                          const std::string& value);
  // Framework memory from the training process (recorded in --jsonl); its
  // "allocated" bytes feed the leak detector. Returns the events that caused.
  std::vector<Event> Framework(std::chrono::system_clock::time_point time, int gpu,
                               const std::string& framework,
                               const std::map<std::string, double, std::less<>>& bytes,
                               std::optional<std::uint32_t> pid = std::nullopt);
  void Close();

  // The fields Observe needs read: every field when it records (--csv,
  // --jsonl, --db), else what its rules, diagnoses and leak detector judge.
  FieldMask Fields() const;

  const Diagnoser& diagnoser() const { return diagnoser_; }
  const leaks::LeakTracker& leaks() const { return leaks_; }
  std::vector<rules::ActiveAlert> ActiveAlerts() const { return engine_->ActiveAlerts(); }

 private:
  Pipeline() = default;
  PipelineOptions options_;
  std::unique_ptr<LineFile> csv_;
  std::unique_ptr<LineFile> jsonl_;
  std::unique_ptr<HistoryOutput> db_;
  std::unique_ptr<rules::RuleEngine> engine_;
  std::unique_ptr<alerts::ActionRunner> actions_;
  Diagnoser diagnoser_;
  leaks::LeakTracker leaks_;
  std::shared_ptr<const Snapshot> previous_;
};

}  // namespace gpuwatch::engine
