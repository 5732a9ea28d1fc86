// ActionRunner: delivers alert events to their rule's actions on its own
// worker thread, so the caller (the sampler's subscriber) never waits for a
// disk, a network or a program.
//
// Submit() only takes a mutex and appends to a bounded queue; when the queue
// is full the oldest event is dropped and counted. A failing action (after a
// webhook's retries) logs one warning per event and the runner goes on.
// Stop() (and the destructor) delivers what is queued, then joins; during
// that flush a webhook makes one attempt per event and no backoff waits.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "alerts/transport.h"
#include "analysis/rules/rule.h"
#include "core/mutex.h"
#include "gpuwatch/event.h"
#include "gpuwatch/status.h"

namespace gpuwatch::alerts {

struct ActionRunnerOptions {
  std::size_t queue_capacity = 1024;
  // Command actions run only when the user opted in (--allow-commands).
  bool allow_commands = false;
  LogSink log;       // log actions and warnings; default: stderr
  std::string host;  // "host" in the JSON body; default: gethostname()
};

struct ActionStats {
  std::uint64_t submitted = 0;
  std::uint64_t delivered = 0;  // per action
  std::uint64_t failed = 0;     // per action, after retries
  std::uint64_t dropped = 0;    // events dropped because the queue was full
};

class ActionRunner {
 public:
  // Builds every rule's transports (opens files, checks URLs); the worker
  // thread starts with the first event submitted. Fails for an unwritable file, a bad URL, or a
  // command action when commands are not allowed.
  static Result<std::unique_ptr<ActionRunner>> Create(const RuleSet& rules,
                                                      ActionRunnerOptions options);
  ~ActionRunner();
  ActionRunner(const ActionRunner&) = delete;
  ActionRunner& operator=(const ActionRunner&) = delete;

  // Any thread. Events whose source is not a rule of the set are ignored.
  void Submit(Event event);
  void Submit(const std::vector<Event>& events);
  // Delivers everything queued, then stops the worker. Idempotent.
  void Stop();

  ActionStats stats() const;

 private:
  explicit ActionRunner(ActionRunnerOptions options);
  void Run(std::stop_token stop);
  void Deliver(const Event& event, std::stop_token stop);

  ActionRunnerOptions options_;
  std::vector<std::unique_ptr<Transport>> transports_;
  std::map<std::string, std::vector<Transport*>, std::less<>> routes_;  // rule name -> actions

  mutable Mutex mu_;
  StopCondVar wake_;
  std::deque<Event> queue_ GUARDED_BY(mu_);
  ActionStats stats_ GUARDED_BY(mu_);
  std::uint64_t dropped_reported_ = 0;  // worker thread only
  bool stopped_ GUARDED_BY(mu_) = false;
  // Last: starts (on the first Submit) after everything above exists.
  std::jthread worker_ GUARDED_BY(mu_);
};

}  // namespace gpuwatch::alerts
