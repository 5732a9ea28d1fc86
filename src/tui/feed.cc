#include "tui/feed.h"

#include <utility>

#include "engine/claim.h"
#include "sampler/sampler.h"
#include "tui/view.h"

namespace gpuwatch::tui {

void Feed::Read(const std::function<void(const TopModel&)>& fn) const {
  MutexLock lock(mu_);
  fn(model_);
}

std::uint64_t Feed::version() const {
  MutexLock lock(mu_);
  return model_.version;
}

void Feed::Write(const std::function<void(TopModel&)>& fn) {
  MutexLock lock(mu_);
  fn(model_);
  ++model_.version;
}

// What a host shows after the pipeline has seen `snapshot`.
void Publish(HostView& h, const std::shared_ptr<const Snapshot>& snapshot,
             const engine::Pipeline& pipeline, const std::vector<Event>& events) {
  h.state.snapshot = snapshot;
  h.state.alerts = pipeline.ActiveAlerts();
  h.state.leaks = pipeline.leaks().Reports();
  h.state.preallocated = pipeline.diagnoser().Preallocated();
  h.state.updated = std::chrono::system_clock::now();
  h.state.down.clear();
  h.history.Add(*snapshot);
  for (const Event& e : events) h.AddEvent(e);
}

namespace {

class LocalFeed final : public Feed {
 public:
  LocalFeed(engine::Source source, const LocalFeedOptions& options, SourceKind kind,
            std::string detail, std::string hostname, std::function<void(const std::string&)> warn)
      : options_(options), warn_(std::move(warn)) {
    auto pipeline = engine::Pipeline::Open(options.pipeline, warn_);
    if (pipeline) {
      pipeline_ = std::move(*pipeline);
    } else if (warn_) {
      warn_(pipeline.error().message());
    }
    SamplerOptions so;
    so.interval = options.interval;
    // This feed takes every snapshot as it comes: the ring need not hold 600.
    so.history = 16;
    // Only what is drawn or judged is asked of the driver.
    so.fields = DrawnFields() | (pipeline_ ? pipeline_->Fields() : FieldMask());
    sampler_ = std::make_unique<Sampler>(std::move(source.backend), std::move(source.resolver), so);
    follower_ = sampler_->Follow();
    {
      MutexLock lock(mu_);
      model_.kind = kind;
      model_.source_detail = std::move(detail);
      model_.interval = options.interval;
      HostView h;
      h.state.label = hostname;
      h.state.hostname = hostname;
      model_.hosts.push_back(std::move(h));
    }
    sampler_->Start();
    thread_ = std::thread([this] { Loop(); });
  }
  ~LocalFeed() override { Stop(); }

  void Stop() override {
    if (stop_.exchange(true)) return;
    if (thread_.joinable()) thread_.join();
    sampler_->Stop();
    if (pipeline_) pipeline_->Close();
  }

 private:
  void Loop() {
    std::optional<host::LeaseBook> book;
    if (options_.leases) book = engine::MachineLeaseBook();
    auto next_leases = std::chrono::steady_clock::time_point::min();
    while (!stop_) {
      auto snap = follower_->Next(std::chrono::milliseconds(100));
      if (!snap) continue;
      std::vector<Event> events;
      if (pipeline_) events = pipeline_->Observe(snap);
      std::optional<host::LeaseTable> leases;
      const auto now = std::chrono::steady_clock::now();
      if (book && now >= next_leases) {
        // A lease file that cannot be read leaves the leases unknown.
        if (auto table = book->Read()) leases = std::move(*table);
        next_leases = now + std::chrono::seconds(1);
      }
      Write([&](TopModel& m) {
        HostView& h = m.hosts.front();
        if (pipeline_) {
          Publish(h, snap, *pipeline_, events);
        } else {
          h.state.snapshot = snap;
          h.history.Add(*snap);
        }
        if (leases) h.state.leases = std::move(leases);
      });
    }
  }

  LocalFeedOptions options_;
  std::function<void(const std::string&)> warn_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<Sampler::Follower> follower_;
  std::unique_ptr<engine::Pipeline> pipeline_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

std::unique_ptr<Feed> StartLocalFeed(engine::Source source, const LocalFeedOptions& options,
                                     SourceKind kind, std::string detail, std::string hostname,
                                     std::function<void(const std::string&)> warn) {
  return std::make_unique<LocalFeed>(std::move(source), options, kind, std::move(detail),
                                     std::move(hostname), std::move(warn));
}

}  // namespace gpuwatch::tui
