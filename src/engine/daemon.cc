#include "engine/daemon.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

#include "backends/replay/daemon_backend.h"
#include "core/driver_calls.h"
#include "core/field_history.h"
#include "core/mutex.h"
#include "engine/job_feed.h"
#include "export/history_document.h"
#include "export/lines.h"
#include "host/leases.h"
#include "host/proc_files.h"
#include "host/proc_parse.h"
#include "sampler/sampler.h"
#include "store/history_reader.h"
#include "transport/answer_socket.h"
#include "transport/job_socket.h"

namespace gpuwatch::engine {
namespace {

// Samples /api/v1/history answers from memory without --db: 10 minutes at 1 Hz.
constexpr std::size_t kRecentSamples = 600;

class Daemon {
 public:
  Daemon(DaemonOptions options, DaemonHooks hooks)
      : options_(std::move(options)), hooks_(std::move(hooks)) {}

  Status Run() {
    server::HttpOptions http = options_.http;
    if (options_.hostname.empty()) options_.hostname = SourceHostname(options_.source);
    options_.outputs.hostname = options_.hostname;
    options_.outputs.log = [this](std::string_view line) { Log(std::string(line)); };
    auto pipeline = OpenPipeline(options_.outputs);
    if (!pipeline) return Status::InvalidArgument(pipeline.error().message());
    pipeline_ = std::move(*pipeline);
    if (!options_.socket.empty()) {
      auto socket = JobSocket::CreateAt(options_.socket);
      if (!socket) return Status::InvalidArgument(socket.error().message());
      socket_ = std::move(*socket);
      Log(fmt::format("jobs report framework memory and marks on {} (GPUWATCH_SOCKET)",
                      options_.socket));
    }
    http.api.hostname = options_.hostname;
    http.demo = options_.source.demo;
    http.api.interval_seconds = std::chrono::duration<double>(options_.interval).count();
    http.history = [this](const server::HistoryQuery& q) { return History(q); };
    // The machine's leases (docs/select.md), parsed once per change of the
    // file and shared by every HTTP worker; holders are looked up in the
    // host's /proc when given, at each request that shows them.
    const std::string& host_proc = options_.source.host_proc;
    http.leases =
        [cache = std::make_shared<host::LeaseCache>(
             host::LeaseBook(host::LeaseDirectory(std::getenv("GPUWATCH_RUNTIME_DIR")),
                             host::ProcessLiveness(host_proc.empty() ? "/proc" : host_proc)),
             [this](const std::string& why) { Log("warning: leases: " + why); })] {
          return cache->Read();
        };
    if (!options_.web_config.empty()) {
      auto web = server::LoadWebConfig(options_.web_config);
      if (!web) return Status::InvalidArgument(web.error().message());
      http.web = *web;
      web_config_time_ = ModifiedTime(options_.web_config);
    }
    http_ = http;
    auto server = server::HttpServer::Start(http, hub_);
    if (!server) return server.error();
    server_ = std::move(*server);
    const std::string shown_host = http.host == "0.0.0.0" ? "127.0.0.1" : http.host;
    Log(fmt::format("listening on {}://{}:{}/ (dashboard), /metrics, /api/v1/{}",
                    http.web.tls() ? "https" : "http", shown_host, server_->port(),
                    http.web.users.empty() ? "" : " (basic auth)"));
    if (http.host != "127.0.0.1" && http.host != "::1" && http.host != "localhost")
      Log("warning: listening beyond this machine: anyone who can reach it can read GPU data");
    OfferAnswers();
    Loop();
    Log("stopping");
    answers_.reset();
    server_->Stop();
    hub_->Stop();
    pipeline_->Close();
    return Status::Ok();
  }

 private:
  void Log(const std::string& line) const {
    if (hooks_.log) hooks_.log(line);
  }

  Result<std::unique_ptr<Pipeline>> OpenPipeline(const PipelineOptions& outputs) {
    return Pipeline::Open(outputs, [this](const std::string& m) { Log("warning: " + m); });
  }

  static std::optional<std::filesystem::file_time_type> ModifiedTime(const std::string& path) {
    std::error_code ec;
    const auto t = std::filesystem::last_write_time(path, ec);
    if (ec) return std::nullopt;
    return t;
  }

  // A changed --web-config is applied: new users at once, TLS changes by
  // restarting the listener; a bad file keeps what runs.
  void WatchWebConfig() {
    if (options_.web_config.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_web_check_) return;
    next_web_check_ = now + std::chrono::seconds(2);
    const auto t = ModifiedTime(options_.web_config);
    if (t == web_config_time_) return;
    web_config_time_ = t;
    auto web = server::LoadWebConfig(options_.web_config);
    if (!web) {
      Log("--web-config changed but is not valid; keeping the running one: " +
          web.error().message());
      return;
    }
    if (web->cert_file == http_.web.cert_file && web->key_file == http_.web.key_file &&
        web->client_ca_file == http_.web.client_ca_file &&
        web->require_client_cert == http_.web.require_client_cert &&
        web->min_version == http_.web.min_version) {
      server_->SetUsers(web->users);
      http_.web = *web;
      Log("--web-config re-read: basic auth users updated");
      return;
    }
    server::HttpOptions next = http_;
    next.web = *web;
    next.port = server_->port();
    server_->Stop();
    auto restarted = server::HttpServer::Start(next, hub_);
    if (!restarted) {
      Log("--web-config: the new TLS settings fail (" + restarted.error().message() +
          "); going on with the previous ones");
      auto previous = server::HttpServer::Start(http_, hub_);
      if (previous) server_ = std::move(*previous);
      return;
    }
    server_ = std::move(*restarted);
    http_ = next;
    Log("--web-config re-read: TLS settings applied");
  }

  // What the front end asks for; true when asked to stop.
  bool HandleRequests() {
    WatchWebConfig();
    const DaemonRequest request = hooks_.poll ? hooks_.poll() : DaemonRequest::kNone;
    if (request == DaemonRequest::kStop) return true;
    if (request == DaemonRequest::kReload) Reload();
    return false;
  }

  // While the GPUs are being opened: reloads and --web-config as usual;
  // true once asked to stop.
  bool HandleRequestsWhileOpening() {
    stop_requested_ = stop_requested_ || HandleRequests();
    return stop_requested_;
  }

  void Reload() {
    if (!hooks_.reload) return;
    auto next = hooks_.reload();
    if (!next) {
      Log("SIGHUP: keeping the running configuration: " + next.error().message());
      return;
    }
    next->outputs.hostname = options_.hostname;
    next->outputs.log = options_.outputs.log;
    auto pipeline = OpenPipeline(next->outputs);
    if (!pipeline) {
      Log("SIGHUP: keeping the running configuration: " + pipeline.error().message());
      return;
    }
    pipeline_->Close();
    pipeline_ = std::move(*pipeline);
    if (!next->note.empty()) Log(next->note);
    options_.outputs = next->outputs;
    Log("SIGHUP: configuration and rules reloaded");
  }

  void Loop() {
    auto backoff = std::chrono::seconds(1);
    std::string last_failure;
    while (true) {
      OpenWait wait;
      wait.give_up = [this] { return HandleRequestsWhileOpening(); };
      wait.slow = [this](const std::string& what) {
        const std::string why = "the driver is not answering: " + what + " (a hung driver?)";
        hub_->SetNotReady(why);
        Log(why + "; still waiting");
      };
      auto source = OpenSourceWaiting(options_.source, wait);
      if (stop_requested_) return;
      if (!source) {
        const std::string why = source.error().message();
        hub_->SetNotReady(why);
        if (why != last_failure) Log("cannot read the GPUs yet (retrying): " + why);
        last_failure = why;
        const auto until = std::chrono::steady_clock::now() + backoff;
        while (std::chrono::steady_clock::now() < until) {
          if (HandleRequests()) return;
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        backoff = std::min(backoff * 2, std::chrono::seconds(30));
        continue;
      }
      if (!last_failure.empty()) Log("the GPUs answer now");
      // Every call's error counter exists from 0, so that increase() sees its first error.
      std::map<std::string, std::uint64_t> none;
      for (const auto& call : source->backend->info().device_calls) none[call] = 0;
      hub_->CountErrors(none);
      if (const std::string banner = SourceBanner(*source); !banner.empty()) Log(banner);
      SamplerOptions options;
      options.interval = options_.interval;
      auto sampler = std::make_shared<Sampler>(std::move(source->backend),
                                               std::move(source->resolver), options);
      // Every snapshot in order (with --replay, every recorded sample).
      const std::unique_ptr<Sampler::Follower> follower = sampler->Follow();
      sampler->Start();
      while (true) {
        if (HandleRequests()) {
          sampler->Stop();
          return;
        }
        auto snap = follower->Next(std::chrono::milliseconds(200));
        if (!snap) {
          // A recording played to its end: its last snapshot stays served.
          if (follower->done()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
          continue;
        }
        std::vector<Event> events = pipeline_->Observe(snap);
        const std::vector<Event> observed = events;  // logged once published
        ReadJobs(*snap, events);
        // Marks arrived before this snapshot was taken: the events stay in time order.
        std::stable_sort(events.begin(), events.end(),
                         [](const Event& a, const Event& b) { return a.time < b.time; });
        if (!snap->stale) hub_->CountErrors(server::FailedCalls(*snap));
        {
          MutexLock lock(mu_);
          recent_.Add(*snap);
        }
        hub_->Publish(snap, pipeline_->ActiveAlerts(), pipeline_->leaks().Reports(), events,
                      framework_.Current(*snap), pipeline_->diagnoser().Preallocated(),
                      pipeline_->diagnoser().Standing());
        // Said once served: what the log says, the API already shows.
        if (snap->stale != stale_logged_) {
          stale_logged_ = snap->stale;
          Log(snap->stale ? "warning: the driver is not answering (" +
                                DescribeHungCall(std::chrono::milliseconds(0))
                                    .value_or("a driver call has not returned") +
                                "): serving the last values, marked stale"
                          : "the driver answers again");
        }
        for (const auto& e : observed) {
          if (e.kind != Event::Kind::kAlertFiring && e.kind != Event::Kind::kAlertResolved)
            Log(EventLogLine(e));  // alerts are logged by their rules' log action
        }
      }
    }
  }

  // What jobs sent on --socket since the previous snapshot: framework memory
  // into the table (and the recordings), marks as events.
  void ReadJobs(const Snapshot& devices, std::vector<Event>& events) {
    if (!socket_) return;
    JobFeedHooks feed;
    feed.memory = [this](const FrameworkReading& r) {
      if (!r.pid) return;
      framework_.Report(*r.pid, r.framework, r.gpu, {r.bytes.begin(), r.bytes.end()}, r.time);
    };
    JobFeed jobs = DrainJobs(*socket_, *pipeline_, feed, &devices);
    for (auto& e : jobs.events) events.push_back(std::move(e));
    for (const auto& error : jobs.errors) Log("--socket: " + error);
  }

  // This machine's GPUs (not the demo fleet or a recording): `gpuwatch`,
  // `query` and `select` may answer from the latest sample (docs/serve.md,
  // "Warm answers"). A socket another daemon serves is left to it.
  void OfferAnswers() {
    const SourceOptions& source = options_.source;
    if (source.demo || !source.scenario.empty() || !source.replay.empty() ||
        !source.host_proc.empty())
      return;
    const std::string path = AnswerSocketPath();
    if (Status s = host::EnsureRuntimeDirectory(std::filesystem::path(path).parent_path());
        !s.ok()) {
      Log("warning: no answers for one-shot commands: " + s.message());
      return;
    }
    // Where /proc hides other users' processes, so does the answer: this user only.
    auto mountinfo = host::ReadWholeFile("/proc/self/mountinfo");
    const bool private_answers = mountinfo && host::HidesProcesses(*mountinfo, "/proc");
    auto answers = AnswerSocket::Create(
        path, [this] { return Answer(); }, private_answers ? 0600 : 0666);
    if (!answers) {
      Log("warning: no answers for one-shot commands: " + answers.error().message());
      return;
    }
    answers_ = std::move(*answers);
    Log(fmt::format(
        "`gpuwatch`, `query` and `select` answer from this daemon's samples ({}{})", path,
        private_answers ? "; this user's only: /proc hides other users' processes" : ""));
  }

  // The latest sample as an answer, written once per sample; nothing
  // before the first.
  std::shared_ptr<const std::string> Answer() {
    const auto published = hub_->Latest();
    const std::shared_ptr<const Snapshot> snap = published ? published->snapshot : nullptr;
    if (!snap) return nullptr;
    MutexLock lock(answer_mu_);
    if (snap != answer_snapshot_) {
      replay::DaemonIdentity id;
      id.source = source_key_;
      id.library = snap->source.starts_with("nvml:") ? snap->source.substr(5) : snap->source;
      id.interval = options_.interval;
      id.mig = !snap->mig_devices.empty();
      answer_ = std::make_shared<const std::string>(
          replay::DaemonIdentityLine(id) + "\n" + JsonlHeader(*snap, options_.hostname) + "\n" +
          JsonlSample(*snap, JsonlDetail::kAnswer) + "\n");
      answer_snapshot_ = snap;
    }
    return answer_;
  }

  Result<nlohmann::json> History(const server::HistoryQuery& q) {
    if (options_.outputs.db.empty()) {
      const auto published = hub_->Latest();
      bool known = false;
      if (published->snapshot) {
        for (const auto& d : published->snapshot->devices) known = known || d.index == q.device;
      }
      if (!known) return Status::NotFound(fmt::format("no GPU {}", q.device));
      FieldHistory::Window window;
      {
        MutexLock lock(mu_);
        window = recent_.Read(q.device, q.fields, q.from, q.to);
      }
      return RingHistoryDocument(window, q.device, q.fields);
    }
    MutexLock lock(history_mu_);
    if (!reader_) {
      auto reader = store::HistoryReader::Open(options_.outputs.db);
      if (!reader) return reader.error();
      reader_.emplace(std::move(*reader));
    }
    auto devices = reader_->Devices();
    if (!devices) return devices.error();
    const store::DeviceRecord* found = nullptr;
    for (const auto& d : *devices) {
      if (d.index == q.device && !d.mig_index && (!found || d.last_seen > found->last_seen))
        found = &d;
    }
    if (found == nullptr)
      return Status::NotFound(fmt::format("no GPU {} in the history", q.device));
    auto series = reader_->DeviceSamples(found->id, q.fields, q.from, q.to, q.step);
    if (!series) return series.error();
    return SeriesDocument(*series, q.device, q.step);
  }

  DaemonOptions options_;
  const DaemonHooks hooks_;
  std::shared_ptr<server::Hub> hub_ = std::make_shared<server::Hub>();
  server::HttpOptions http_;
  std::unique_ptr<server::HttpServer> server_;
  bool stop_requested_ = false;  // asked to stop while the GPUs were being opened
  bool stale_logged_ = false;    // the last snapshot was stale, and the log said so
  std::optional<std::filesystem::file_time_type> web_config_time_;
  std::chrono::steady_clock::time_point next_web_check_;
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<JobSocket> socket_;
  FrameworkTable framework_;
  Mutex mu_;
  // The last kRecentSamples samples' numbers, for /api/v1/history without --db.
  FieldHistory recent_ GUARDED_BY(mu_){kRecentSamples};
  const std::string source_key_ = GpuSourceKey();  // this daemon's, as it started
  Mutex answer_mu_;
  std::shared_ptr<const Snapshot> answer_snapshot_ GUARDED_BY(answer_mu_);
  std::shared_ptr<const std::string> answer_ GUARDED_BY(answer_mu_);
  std::unique_ptr<AnswerSocket> answers_;  // after what its answers read: stops first
  Mutex history_mu_;
  std::optional<store::HistoryReader> reader_ GUARDED_BY(history_mu_);
};

}  // namespace

Status RunDaemon(DaemonOptions options, DaemonHooks hooks) {
  Daemon daemon(std::move(options), std::move(hooks));
  return daemon.Run();
}

}  // namespace gpuwatch::engine
