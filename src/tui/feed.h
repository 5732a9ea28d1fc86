// Sources of `top`: each fills the TopModel from its own thread(s), so that
// drawing never waits on a driver call or a network answer. The view reads
// the model under the feed's lock (Read); keys that move a recording reach
// it through Act.
//  - LocalFeed: this machine's GPUs (or the demo fleet, or a scenario): a
//    Sampler and the event pipeline (alerts, leaks, diagnoses), and the
//    machine's lease file.
//  - ReplayFeed: a recording, on a clock of its own that pauses, seeks and
//    changes speed; every sample is analysed once, in order (a seek back
//    starts the analysis again from the first sample).
//  - RemoteFeed: `gpuwatch serve` daemons over their JSON API, a thread each.
//  - PrometheusFeed: every host a Prometheus scrapes.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "engine/pipeline.h"
#include "engine/source.h"
#include "tui/keys.h"
#include "tui/model.h"

namespace gpuwatch::tui {

class Feed {
 public:
  virtual ~Feed() = default;
  // Calls `fn` with the model, under the lock.
  void Read(const std::function<void(const TopModel&)>& fn) const EXCLUDES(mu_);
  std::uint64_t version() const EXCLUDES(mu_);
  virtual void Act(const Action&) {}
  // Stops the threads (also done by the destructor of each feed).
  virtual void Stop() = 0;

 protected:
  // Applies `fn` to the model and bumps its version.
  void Write(const std::function<void(TopModel&)>& fn) EXCLUDES(mu_);
  mutable Mutex mu_;
  TopModel model_ GUARDED_BY(mu_);
};

struct LocalFeedOptions {
  std::chrono::milliseconds interval{1000};
  engine::PipelineOptions pipeline;  // rules, hostname; no outputs
  bool leases = true;                // read the machine's lease file
};

// Takes an opened source (engine::OpenSource); `warn` hears the pipeline's warnings.
std::unique_ptr<Feed> StartLocalFeed(engine::Source source, const LocalFeedOptions& options,
                                     SourceKind kind, std::string detail, std::string hostname,
                                     std::function<void(const std::string&)> warn);

struct ReplayFeedOptions {
  std::string path;
  double speed = 1;
  engine::PipelineOptions pipeline;
};
Result<std::unique_ptr<Feed>> StartReplayFeed(const ReplayFeedOptions& options,
                                              std::function<void(const std::string&)> warn);

// What a host shows after the pipeline has seen `snapshot` (its events added).
void Publish(HostView& host, const std::shared_ptr<const Snapshot>& snapshot,
             const engine::Pipeline& pipeline, const std::vector<Event>& events);

#if GPUWATCH_TUI_HTTP
struct RemoteEndpoint;
struct PrometheusSource;
std::unique_ptr<Feed> StartRemoteFeed(std::vector<RemoteEndpoint> endpoints,
                                      std::chrono::milliseconds interval);
std::unique_ptr<Feed> StartPrometheusFeed(PrometheusSource source,
                                          std::chrono::milliseconds interval);
#endif

}  // namespace gpuwatch::tui
