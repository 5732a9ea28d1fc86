// The embedded front end (include/gpuwatch/monitor.h): the engine's source
// and pipeline behind a small, pull-only interface.
#include "gpuwatch/monitor.h"

#include <fmt/format.h>

#include <cstdlib>
#include <deque>
#include <thread>

#include "analysis/leaks/series_check.h"
#include "analysis/select/selection.h"
#include "core/mutex.h"
#include "core/thread_name.h"
#include "engine/claim.h"
#include "engine/pipeline.h"
#include "engine/source.h"
#include "export/lines.h"
#include "export/snapshot_json.h"
#include "monitor/metric_windows.h"
#include "sampler/collect.h"
#include "sampler/sampler.h"

namespace gpuwatch {
namespace {

constexpr std::size_t kEventCapacity = 10'000;

engine::SourceOptions ArgsFor(const MonitorOptions& o) {
  engine::SourceOptions a;
  a.demo = o.demo;
  a.scenario = o.scenario;
  a.replay = o.replay;
  a.demo_dir = o.demo_dir;
  a.host_proc = o.host_proc;
  a.replay_speed = 1.0;
  a.shutdown_nvml_on_close = true;  // the next source may be another scenario
  return a;
}

class MonitorImpl final : public Monitor {
 public:
  MonitorImpl(std::unique_ptr<Sampler> sampler, std::unique_ptr<engine::Pipeline> pipeline)
      : sampler_(std::move(sampler)),
        pipeline_(std::move(pipeline)),
        in_order_(sampler_->Follow()) {
    sampler_->Start();
    follower_ = std::jthread([this](std::stop_token stop) { Follow(stop); });
  }
  ~MonitorImpl() override {
    follower_.request_stop();
    if (follower_.joinable()) follower_.join();
    sampler_->Stop();
    pipeline_->Close();
  }

  std::shared_ptr<const Snapshot> Latest() const override { return sampler_->Latest(); }
  std::shared_ptr<const Snapshot> WaitNewer(std::uint64_t after,
                                            std::chrono::milliseconds timeout) const override {
    return sampler_->WaitNewer(after, timeout);
  }
  std::vector<Event> TakeEvents() override {
    MutexLock lock(mu_);
    std::vector<Event> out(events_.begin(), events_.end());
    events_.clear();
    return out;
  }
  std::uint64_t dropped_events() const override {
    MutexLock lock(mu_);
    return dropped_;
  }
  std::uint64_t OpenWindow() override {
    MutexLock lock(mu_);
    return windows_.Open();
  }
  Result<std::map<std::string, MetricStats>> WindowStats(std::uint64_t window,
                                                         bool reset) override {
    MutexLock lock(mu_);
    const auto* stats = windows_.Stats(window);
    if (stats == nullptr) return Status::NotFound(fmt::format("no open window {}", window));
    std::map<std::string, MetricStats> out = *stats;
    if (reset) windows_.Reset(window);
    return out;
  }
  void CloseWindow(std::uint64_t window) override {
    MutexLock lock(mu_);
    windows_.Close(window);
  }

 private:
  // On its own thread: every snapshot through the pipeline and the windows.
  void Follow(const std::stop_token& stop) {
    NameThisThread("gw-follower");
    while (!stop.stop_requested()) {
      auto snap = in_order_->Next(std::chrono::milliseconds(100));
      if (!snap) {
        // A recording played to its end.
        if (in_order_->done()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      std::vector<Event> events = pipeline_->Observe(snap);
      MutexLock lock(mu_);
      windows_.Observe(*snap);
      for (Event& e : events) {
        if (events_.size() == kEventCapacity) {
          events_.pop_front();
          ++dropped_;
        }
        events_.push_back(std::move(e));
      }
    }
  }

  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<engine::Pipeline> pipeline_;         // used by the follower thread only
  const std::unique_ptr<Sampler::Follower> in_order_;  // ditto
  mutable Mutex mu_;
  std::deque<Event> events_ GUARDED_BY(mu_);
  std::uint64_t dropped_ GUARDED_BY(mu_) = 0;
  monitor::MetricWindows windows_ GUARDED_BY(mu_);
  std::jthread follower_;
};

}  // namespace

namespace {

Result<Snapshot> ReadOnceWith(const MonitorOptions& options, const CollectOptions& collect) {
  auto source = engine::OpenSource(ArgsFor(options));
  if (!source) return source.error();
  return CollectOnce(*source->backend, source->resolver.get(), collect);
}

}  // namespace

Result<Snapshot> ReadOnce(const MonitorOptions& options) {
  CollectOptions collect;
  collect.fields =
      FieldsWithCadence({Cadence::kStatic, Cadence::kSlow, Cadence::kInterval, Cadence::kBuffers});
  collect.processes = options.processes;
  return ReadOnceWith(options, collect);
}

Result<std::unique_ptr<Monitor>> Monitor::Start(const MonitorOptions& options) {
  if (options.interval < std::chrono::milliseconds(10)) {
    return Status::InvalidArgument(
        fmt::format("interval {} ms: the shortest is 10 ms", options.interval.count()));
  }
  engine::PipelineOptions p;
  p.rules = options.rules;
  p.hostname = engine::Hostname();
  p.log = [](std::string_view) {};  // events are pulled with TakeEvents
  auto pipeline = engine::Pipeline::Open(p, [](const std::string&) {});
  if (!pipeline) return pipeline.error();
  auto source = engine::OpenSource(ArgsFor(options));
  if (!source) return source.error();
  SamplerOptions s;
  s.interval = options.interval;
  s.processes = options.processes;
  auto sampler =
      std::make_unique<Sampler>(std::move(source->backend), std::move(source->resolver), s);
  return std::unique_ptr<Monitor>(new MonitorImpl(std::move(sampler), std::move(*pipeline)));
}

std::string SnapshotJson(const Snapshot& snapshot) {
  return SnapshotToJson(snapshot, engine::Hostname())
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string EventJson(const Event& event) {
  return EventToJson(event).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::string> SelectJson(const MonitorOptions& options, const SelectRequest& request) {
  if (request.count < 1 || request.count > 4096) {
    return Status::InvalidArgument(fmt::format("count {}: expected 1 to 4096", request.count));
  }
  for (const auto* ratio : {&request.max_utilization, &request.max_memory_utilization}) {
    if (*ratio && !(**ratio >= 0 && **ratio <= 1)) {
      return Status::InvalidArgument(
          fmt::format("{}: a limit on utilization is a ratio from 0 to 1", **ratio));
    }
  }
  if (request.min_free_bytes && !(*request.min_free_bytes >= 0)) {
    return Status::InvalidArgument("min_free_bytes must be 0 or more");
  }
  select::Criteria c;
  c.count = request.count;
  c.min_free_bytes = request.min_free_bytes;
  c.max_utilization = request.max_utilization;
  c.max_memory_utilization = request.max_memory_utilization;
  c.exclude = {request.exclude.begin(), request.exclude.end()};
  auto order = select::ParseOrder(request.order);
  if (!order) return order.error();
  c.order = *order;
  c.free_users = {request.free_users.begin(), request.free_users.end()};
  c.seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  auto snapshot = ReadOnceWith(options, engine::ChoosingReads(c));
  if (!snapshot) return snapshot.error();
  if (options.replay.empty()) {
    if (auto leases = engine::MachineLeaseBook().Read()) c.taken = engine::TakenBy(*leases);
  }
  const char* visible_env = std::getenv("CUDA_VISIBLE_DEVICES");
  const char* order_env = std::getenv("CUDA_DEVICE_ORDER");
  auto visible = select::VisibleDevices(
      visible_env ? std::optional<std::string_view>(visible_env) : std::nullopt,
      order_env ? std::optional<std::string_view>(order_env) : std::nullopt, *snapshot);
  if (!visible) return visible.error();
  const select::Choice choice = select::Choose(*snapshot, c, *visible);
  const auto candidate = [](const select::Candidate& x) {
    return nlohmann::json{{"id", x.id},
                          {"index", x.index},
                          {"mig_index", x.mig_index ? nlohmann::json(*x.mig_index) : nullptr},
                          {"uuid", x.uuid},
                          {"free_bytes", x.free_bytes},
                          {"utilization", x.utilization},
                          {"memory_utilization", x.memory_utilization},
                          {"reasons", x.reasons}};
  };
  nlohmann::json out = {{"chosen", nlohmann::json::array()},
                        {"candidates", nlohmann::json::array()}};
  for (const auto& x : choice.chosen) out["chosen"].push_back(candidate(x));
  for (const auto& x : choice.candidates) out["candidates"].push_back(candidate(x));
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<SeriesLeakVerdict> CheckSeriesForLeak(const std::vector<double>& bytes,
                                             double min_bytes_per_iteration) {
  if (bytes.size() < 16) {
    return Status::InvalidArgument(
        fmt::format("{} iterations: a leak check needs at least 16", bytes.size()));
  }
  if (!(min_bytes_per_iteration > 0)) {
    return Status::InvalidArgument("the smallest leak rate must be more than 0 bytes an iteration");
  }
  std::vector<leaks::Point> points;
  points.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    points.push_back(leaks::Point{static_cast<double>(i), bytes[i]});
  }
  const leaks::SeriesCheck check = leaks::CheckSeries(points, min_bytes_per_iteration);
  const leaks::LeakEstimate& e = check.estimate;
  SeriesLeakVerdict v;
  v.leak = check.leak;
  v.bytes_per_iteration = e.rate_bytes_per_s;
  v.low = e.rate_low_bytes_per_s;
  v.high = e.rate_high_bytes_per_s;
  v.confidence = e.confidence;
  v.iterations = bytes.size();
  const auto kib = [](double b) { return fmt::format("{:.1f} KiB", b / 1024); };
  if (v.leak) {
    v.explanation = fmt::format(
        "leak: the floor of the series grows {} per iteration ({} to {}, confidence {:.3f}) over "
        "{} iterations",
        kib(v.bytes_per_iteration), kib(v.low), kib(v.high), v.confidence, v.iterations);
  } else if (!e.enough_evidence) {
    v.explanation =
        fmt::format("no leak found, but {} iterations were too few to test", v.iterations);
  } else {
    v.explanation = fmt::format(
        "no leak: the floor of the series moves {} per iteration over {} iterations (a leak is "
        "at least {} and significant)",
        kib(v.bytes_per_iteration), v.iterations, kib(min_bytes_per_iteration));
  }
  return v;
}

}  // namespace gpuwatch
