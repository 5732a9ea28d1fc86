// A recording under `top`: played on a clock of its own (pause, seek, speed),
// every sample through the pipeline once and in order. A seek back opens the
// recording again and analyses it from its first sample up to the target, so
// what the view shows is what a straight play would have shown there.
#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "sampler/collect.h"
#include "tui/feed.h"

namespace gpuwatch::tui {
namespace {

constexpr double kMinSpeed = 1.0 / 16;
constexpr double kMaxSpeed = 1024;

class ReplayFeed final : public Feed {
 public:
  ReplayFeed(ReplayFeedOptions options, std::string hostname,
             std::function<void(const std::string&)> warn)
      : options_(std::move(options)), warn_(std::move(warn)), hostname_(std::move(hostname)) {}
  ~ReplayFeed() override { Stop(); }

  // Opens the recording (again) and reads its first sample.
  Status Open() {
    engine::SourceOptions so;
    so.replay = options_.path;
    so.replay_speed = 0;  // every sample due at once: this feed keeps the clock
    auto source = engine::OpenSource(so);
    if (!source) return source.error();
    source_ = std::move(*source);
    auto pipeline = engine::Pipeline::Open(options_.pipeline, warn_);
    if (!pipeline) return pipeline.error();
    pipeline_ = std::move(*pipeline);
    done_ = false;
    ReadNext();
    if (!pending_) return Status::NotFound(options_.path + ": no samples");
    Write([&](TopModel& m) {
      m.kind = SourceKind::kReplay;
      m.source_detail = options_.path;
      m.hosts.clear();
      m.hosts.emplace_back();
      m.hosts.front().state.label = hostname_;
      m.hosts.front().state.hostname = hostname_;
      if (!m.replay) {
        m.replay = ReplayPosition{};
        m.replay->speed = options_.speed;
        m.replay->first = pending_->time;
        m.replay->at = pending_->time;
      }
      m.replay->finished = false;
    });
    return Status::Ok();
  }

  void Start() {
    thread_ = std::thread([this] { Loop(); });
  }

  void Act(const Action& a) override {
    MutexLock lock(actions_mu_);
    actions_.push_back(a);
  }

  void Stop() override {
    if (stop_.exchange(true)) return;
    if (thread_.joinable()) thread_.join();
    if (pipeline_) pipeline_->Close();
  }

 private:
  void ReadNext() {
    pending_.reset();
    if (done_) return;
    CollectOptions co;
    pending_ = std::make_shared<const Snapshot>(CollectOnce(*source_.backend, nullptr, co));
    done_ = source_.backend->Finished();
  }

  // Applies the keys' actions; returns the recording time to play to.
  double TakeActions(double at, double shown, bool& reopen) {
    std::deque<Action> actions;
    {
      MutexLock lock(actions_mu_);
      actions.swap(actions_);
    }
    for (const Action& a : actions) {
      Write([&](TopModel& m) {
        if (a.kind == Action::Kind::kPause) m.replay->paused = !m.replay->paused;
        if (a.kind == Action::Kind::kSpeed) {
          m.replay->speed = std::clamp(m.replay->speed * a.speed_factor, kMinSpeed, kMaxSpeed);
        }
      });
      if (a.kind == Action::Kind::kSeek) {
        at = std::max(first_s_, at + a.seek_s);
        if (at < shown) reopen = true;
      }
    }
    return at;
  }

  void Loop() {
    first_s_ = SecondsOf(pending_->time);
    double at = first_s_;  // where the clock stands, recording seconds
    double shown = -1;     // the time of the newest sample analysed
    auto last = std::chrono::steady_clock::now();
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const auto now = std::chrono::steady_clock::now();
      const double wall = std::chrono::duration<double>(now - last).count();
      last = now;
      bool reopen = false;
      at = TakeActions(at, shown, reopen);
      bool paused = false;
      double speed = 1;
      Read([&](const TopModel& m) {
        paused = m.replay->paused;
        speed = m.replay->speed;
      });
      // The clock runs while playing and there is more to play (or a seek back reopens it).
      if (!paused && (pending_ || reopen)) at += wall * speed;
      if (reopen) {
        if (Status s = Open(); !s.ok()) {
          if (warn_) warn_(s.message());
          return;
        }
        shown = -1;
      }
      // Every sample up to the clock, in order; the model once at the end.
      std::vector<Event> events;
      std::shared_ptr<const Snapshot> latest;
      HostView staged;
      bool any = false;
      while (pending_ && SecondsOf(pending_->time) <= at && !stop_) {
        auto snap = pending_;
        for (Event& e : pipeline_->Observe(snap)) events.push_back(std::move(e));
        latest = snap;
        any = true;
        shown = SecondsOf(snap->time);
        Write([&](TopModel& m) { m.hosts.front().history.Add(*snap); });
        ReadNext();
      }
      const bool finished = !pending_;
      if (finished) at = shown;  // the clock stops at the end: a seek back counts from there
      Write([&](TopModel& m) {
        if (any) {
          HostView& h = m.hosts.front();
          // (The history took each sample above, as it was analysed.)
          h.state.snapshot = latest;
          h.state.alerts = pipeline_->ActiveAlerts();
          h.state.leaks = pipeline_->leaks().Reports();
          h.state.preallocated = pipeline_->diagnoser().Preallocated();
          for (const Event& e : events) h.AddEvent(e);
        }
        m.replay->at = std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                std::chrono::duration<double>(shown >= 0 ? shown : at)));
        m.replay->finished = finished;
      });
    }
  }

  ReplayFeedOptions options_;
  std::function<void(const std::string&)> warn_;
  std::string hostname_;
  engine::Source source_;
  std::unique_ptr<engine::Pipeline> pipeline_;
  std::shared_ptr<const Snapshot> pending_;  // read, not yet due
  bool done_ = false;
  double first_s_ = 0;
  Mutex actions_mu_;
  std::deque<Action> actions_ GUARDED_BY(actions_mu_);
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<Feed>> StartReplayFeed(const ReplayFeedOptions& options,
                                              std::function<void(const std::string&)> warn) {
  engine::SourceOptions so;
  so.replay = options.path;
  std::string hostname = engine::SourceHostname(so);
  if (hostname.empty()) hostname = "recording";
  auto feed = std::make_unique<ReplayFeed>(options, std::move(hostname), std::move(warn));
  if (Status s = feed->Open(); !s.ok()) return s;
  feed->Start();
  return std::unique_ptr<Feed>(std::move(feed));
}

}  // namespace gpuwatch::tui
