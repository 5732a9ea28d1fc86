// RuleEngine: turns a stream of snapshots into alert events. For each rule and
// each device (or each process on a device, for process rules) it keeps a small
// state machine:
//
//   inactive --condition true--> pending --held `for`--> firing (kAlertFiring)
//   firing --clear true--> clearing --held `clear_for`--> inactive (kAlertResolved)
//
// A condition that turns false or unknown (N/A) while pending goes back to
// inactive; a clear that stops holding while clearing goes back to firing.
// Processes are keyed by (pid, start ticks), so a reused pid is a new process;
// a firing process alert whose process has ended is resolved and forgotten.
//
// Pure and single-threaded: no I/O, no clocks (time comes from snapshots), one
// caller. Snapshots must be passed in time order.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/rules/rule.h"
#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::rules {

// The catalogue fields `rules` read: what their conditions, clear conditions
// and messages name (a derived field, its sources). A sampler that reads
// these, at their cadence, gives the rules everything they judge.
FieldMask FieldsRead(const RuleSet& rules);

// An alert that is firing now (for /metrics gpuwatch_alert_active and the API).
struct ActiveAlert {
  std::string rule;
  Severity severity = Severity::kWarning;
  int gpu = 0;
  std::optional<ProcessKey> process;
  std::chrono::system_clock::time_point since;  // when it fired
  std::optional<double> value;                  // latest value of the condition's first field
  std::string message;                          // as fired
};

class RuleEngine {
 public:
  explicit RuleEngine(RuleSet rules);

  // Evaluates every rule on `snapshot` and returns what changed: alerts that
  // fired and alerts that resolved, in rule order.
  std::vector<Event> Evaluate(const Snapshot& snapshot);

  // Alerts firing after the last Evaluate, in (rule, gpu, process) order.
  std::vector<ActiveAlert> ActiveAlerts() const;

  const RuleSet& rules() const { return rules_; }

 private:
  enum class Phase : std::uint8_t { kPending, kFiring, kClearing };
  struct Key {
    std::size_t rule = 0;
    int gpu = 0;
    std::optional<ProcessKey> process;
    friend auto operator<=>(const Key&, const Key&) = default;
  };
  struct State {
    Phase phase = Phase::kPending;
    std::chrono::system_clock::time_point since;  // entered the phase
    std::chrono::system_clock::time_point fired_at;
    std::optional<double> value;
    std::string message;
    std::uint64_t seen = 0;  // tick_ of the last snapshot that had this key
  };

  void Step(const Key& key, const EvalContext& ctx, std::chrono::system_clock::time_point now,
            std::vector<Event>* events);
  void ForgetEndedProcesses(const Snapshot& snapshot, std::vector<Event>* events);
  Event MakeEvent(const Key& key, Event::Kind kind, std::chrono::system_clock::time_point now,
                  const State& state) const;

  RuleSet rules_;
  std::map<Key, State> states_;
  std::map<int, double> last_ecc_uncorrected_;  // per gpu, last known counter
  std::map<int, double> last_xid_total_;        // per gpu, last known counter
  std::uint64_t tick_ = 0;
};

}  // namespace gpuwatch::rules
