// `gpuwatch serve`: the daemon. Samples every GPU, keeps history (--db),
// evaluates rules and leaks, and serves /metrics, the JSON API, live streams
// and the dashboard (src/server). Starts without a driver and keeps retrying
// (readyz says why); SIGTERM / SIGINT stop it cleanly; SIGHUP re-reads the
// config and rules. docs/serve.md.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/pipeline.h"
#include "cli/serve_config.h"
#include "cli/serve_history.h"
#include "cli/signals.h"
#include "core/driver_calls.h"
#include "core/mutex.h"
#include "export/lines.h"
#include "gpuwatch/units.h"
#include "host/leases.h"
#include "sampler/sampler.h"
#include "server/http_server.h"
#include "store/history_reader.h"
#include "transport/job_socket.h"

namespace gpuwatch::cli {
namespace {

void Log(const std::string& line) { std::cerr << "gpuwatch serve: " << line << std::endl; }

class Daemon {
 public:
  Daemon(const CommonArgs& common, ServeArgs args, const CLI::App& command)
      : common_(common), args_(std::move(args)), command_(command) {}

  int Run() {
    auto interval = ParseDuration(args_.interval);
    if (!interval) return Usage("--interval: " + interval.error().message());
    if (*interval < std::chrono::milliseconds(100))
      return Usage("--interval: the daemon's shortest interval is 100ms");
    interval_ = *interval;
    server::HttpOptions http;
    if (Status s = server::ParseListen(args_.listen, http.host, http.port); !s.ok())
      return Usage(s.message());
    if (args_.hostname.empty()) args_.hostname = SourceHostname(common_);
    args_.outputs.hostname = args_.hostname;
    args_.outputs.log = [](std::string_view line) { Log(std::string(line)); };
    auto pipeline = OpenPipeline();
    if (!pipeline) return Usage(pipeline.error().message());
    pipeline_ = std::move(*pipeline);
    if (!args_.socket.empty()) {
      auto socket = JobSocket::CreateAt(args_.socket);
      if (!socket) return Usage(socket.error().message());
      socket_ = std::move(*socket);
      Log(fmt::format("jobs report framework memory and marks on {} (GPUWATCH_SOCKET)",
                      args_.socket));
    }

    http.metrics.process_metrics = args_.process_metrics;
    http.metrics.process_user = args_.process_user;
    http.metrics.dcgm_compat = args_.dcgm_compat;
    http.api.hostname = args_.hostname;
    http.allowed_hosts = args_.allow_hosts;
    http.api.interval_seconds = std::chrono::duration<double>(interval_).count();
    http.version = GPUWATCH_VERSION;
    http.history = [this](const server::HistoryQuery& q) { return History(q); };
    // The machine's leases (docs/select.md), parsed once per change of the
    // file and shared by every HTTP worker; holders are looked up in the
    // host's /proc when given, at each request that shows them.
    http.leases =
        [cache = std::make_shared<host::LeaseCache>(
             host::LeaseBook(
                 host::LeaseDirectory(std::getenv("GPUWATCH_RUNTIME_DIR")),
                 host::ProcessLiveness(common_.host_proc.empty() ? "/proc" : common_.host_proc)),
             [](const std::string& why) { Log("warning: leases: " + why); })] {
          return cache->Read();
        };
    if (!args_.web_config.empty()) {
      auto web = server::LoadWebConfig(args_.web_config);
      if (!web) return Usage(web.error().message());
      http.web = *web;
      web_config_time_ = ModifiedTime(args_.web_config);
    }
    http_ = http;
    auto server = server::HttpServer::Start(http, hub_);
    if (!server) {
      std::cerr << "gpuwatch serve: " << server.error().message() << "\n";
      return server.error().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
    }
    server_ = std::move(*server);
    const std::string shown_host = http.host == "0.0.0.0" ? "127.0.0.1" : http.host;
    Log(fmt::format("listening on {}://{}:{}/ (dashboard), /metrics, /api/v1/{}",
                    http.web.tls() ? "https" : "http", shown_host, server_->port(),
                    http.web.users.empty() ? "" : " (basic auth)"));
    if (http.host != "127.0.0.1" && http.host != "::1" && http.host != "localhost")
      Log("warning: listening beyond this machine: anyone who can reach it can read GPU data");
    CatchSignals({SIGINT, SIGTERM, SIGHUP});
    Loop();
    Log("stopping");
    server_->Stop();
    hub_->Stop();
    pipeline_->Close();
    return kExitOk;
  }

 private:
  int Usage(const std::string& m) {
    std::cerr << "gpuwatch serve: " << m << "\n";
    return kExitUsage;
  }

  Result<std::unique_ptr<Pipeline>> OpenPipeline() {
    return Pipeline::Open(args_.outputs, [](const std::string& m) { Log("warning: " + m); });
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
    if (args_.web_config.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_web_check_) return;
    next_web_check_ = now + std::chrono::seconds(2);
    const auto t = ModifiedTime(args_.web_config);
    if (t == web_config_time_) return;
    web_config_time_ = t;
    auto web = server::LoadWebConfig(args_.web_config);
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

  // Returns true when asked to stop.
  bool HandleSignal() {
    WatchWebConfig();
    const int sig = TakeSignal();
    if (sig == SIGINT || sig == SIGTERM) return true;
    if (sig == SIGHUP) Reload();
    return false;
  }

  // While the GPUs are being opened: SIGHUP and --web-config as usual;
  // true once SIGINT or SIGTERM asks to stop.
  bool HandleSignalWhileOpening() {
    stop_requested_ = stop_requested_ || HandleSignal();
    return stop_requested_;
  }

  void Reload() {
    if (args_.config.empty()) {
      Log("SIGHUP: no --config file; re-reading the rules");
    }
    ServeArgs next = args_;
    if (!args_.config.empty()) {
      if (Status s = LoadConfig(args_.config, next, command_); !s.ok()) {
        Log("SIGHUP: keeping the running configuration: " + s.message());
        return;
      }
    }
    next.outputs.hostname = args_.hostname;
    next.outputs.log = args_.outputs.log;
    auto pipeline =
        Pipeline::Open(next.outputs, [](const std::string& m) { Log("warning: " + m); });
    if (!pipeline) {
      Log("SIGHUP: keeping the running configuration: " + pipeline.error().message());
      return;
    }
    pipeline_->Close();
    pipeline_ = std::move(*pipeline);
    if (next.listen != args_.listen || next.interval != args_.interval)
      Log("SIGHUP: listen and interval changes take effect at the next start");
    args_.outputs = next.outputs;
    Log("SIGHUP: configuration and rules reloaded");
  }

  void Loop() {
    auto backoff = std::chrono::seconds(1);
    std::string last_failure;
    while (true) {
      OpenWait wait;
      wait.give_up = [this] { return HandleSignalWhileOpening(); };
      wait.slow = [this](const std::string& what) {
        const std::string why = "the driver is not answering: " + what + " (a hung driver?)";
        hub_->SetNotReady(why);
        Log(why + "; still waiting");
      };
      auto source = OpenSourceWaiting(common_, wait);
      if (stop_requested_) return;
      if (!source) {
        const std::string why = source.error().message();
        hub_->SetNotReady(why);
        if (why != last_failure) Log("cannot read the GPUs yet (retrying): " + why);
        last_failure = why;
        const auto until = std::chrono::steady_clock::now() + backoff;
        while (std::chrono::steady_clock::now() < until) {
          if (HandleSignal()) return;
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        backoff = std::min(backoff * 2, std::chrono::seconds(30));
        continue;
      }
      if (!last_failure.empty()) Log("the GPUs answer now");
      if (!source->demo_scenario.empty())
        Log("DEMO: simulated GPUs (" + source->demo_scenario + ")");
      SamplerOptions options;
      options.interval = interval_;
      auto sampler = std::make_shared<Sampler>(std::move(source->backend),
                                               std::move(source->resolver), options);
      // Every snapshot in order (with --replay, every recorded sample).
      const std::unique_ptr<Sampler::Follower> follower = sampler->Follow();
      sampler->Start();
      {
        MutexLock lock(mu_);
        sampler_ = sampler;
      }
      while (true) {
        if (HandleSignal()) {
          sampler->Stop();
          return;
        }
        auto snap = follower->Next(std::chrono::milliseconds(200));
        if (!snap) {
          // A recording played to its end: its last snapshot stays served.
          if (follower->done()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
          continue;
        }
        if (snap->stale != stale_logged_) {
          stale_logged_ = snap->stale;
          Log(snap->stale ? "warning: the driver is not answering (" +
                                DescribeHungCall(std::chrono::milliseconds(0))
                                    .value_or("a driver call has not returned") +
                                "): serving the last values, marked stale"
                          : "the driver answers again");
        }
        std::vector<Event> events = pipeline_->Observe(snap);
        for (const auto& e : events) {
          if (e.kind != Event::Kind::kAlertFiring && e.kind != Event::Kind::kAlertResolved)
            Log(EventLogLine(e));  // alerts are logged by their rules' log action
        }
        ReadJobs(events);
        // Marks arrived before this snapshot was taken: the events stay in time order.
        std::stable_sort(events.begin(), events.end(),
                         [](const Event& a, const Event& b) { return a.time < b.time; });
        if (!snap->stale) hub_->CountErrors(server::FailedCalls(*snap));
        hub_->Publish(snap, pipeline_->ActiveAlerts(), pipeline_->leaks().Reports(), events,
                      framework_.Current(*snap), pipeline_->diagnoser().Preallocated());
      }
    }
  }

  // What jobs sent on --socket since the previous snapshot: framework memory
  // into the table (and the recordings), marks as events.
  void ReadJobs(std::vector<Event>& events) {
    if (!socket_) return;
    for (auto& r : socket_->Drain()) {
      const JobMessage& m = r.message;
      const std::optional<std::uint32_t> pid = r.sender_pid ? r.sender_pid : m.pid;
      if (m.kind == JobMessage::Kind::kMemory && pid) {
        framework_.Report(*pid, m.framework, m.device, {m.bytes.begin(), m.bytes.end()}, r.time);
        for (auto& e : pipeline_->Framework(r.time, m.device, m.framework, m.bytes, pid)) {
          events.push_back(std::move(e));
        }
      } else if (m.kind == JobMessage::Kind::kMark) {
        std::vector<Event> marked = pipeline_->Mark(r.time, m.mark, m.mark_value);
        if (pid) marked.front().process = ProcessKey{*pid, 0};
        for (auto& e : marked) events.push_back(std::move(e));
      }
    }
    for (const auto& error : socket_->DrainErrors()) Log("--socket: " + error);
  }

  Result<nlohmann::json> History(const server::HistoryQuery& q) {
    if (args_.outputs.db.empty()) {
      std::shared_ptr<Sampler> sampler;
      {
        MutexLock lock(mu_);
        sampler = sampler_;
      }
      const auto published = hub_->Latest();
      bool known = false;
      if (published.snapshot) {
        for (const auto& d : published.snapshot->devices) known = known || d.index == q.device;
      }
      if (!known) return Status::NotFound(fmt::format("no GPU {}", q.device));
      return server::RingHistoryDocument(
          sampler ? sampler->History() : std::vector<std::shared_ptr<const Snapshot>>{}, q.device,
          q.fields, q.from, q.to);
    }
    MutexLock lock(history_mu_);
    if (!reader_) {
      auto reader = store::HistoryReader::Open(args_.outputs.db);
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

  const CommonArgs& common_;
  ServeArgs args_;
  const CLI::App& command_;
  std::chrono::milliseconds interval_{1000};
  std::shared_ptr<server::Hub> hub_ = std::make_shared<server::Hub>();
  server::HttpOptions http_;
  std::unique_ptr<server::HttpServer> server_;
  bool stop_requested_ = false;  // SIGINT or SIGTERM while the GPUs were being opened
  bool stale_logged_ = false;    // the last snapshot was stale, and the log said so
  std::optional<std::filesystem::file_time_type> web_config_time_;
  std::chrono::steady_clock::time_point next_web_check_;
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<JobSocket> socket_;
  server::FrameworkTable framework_;
  Mutex mu_;
  std::shared_ptr<Sampler> sampler_;
  Mutex history_mu_;
  std::optional<store::HistoryReader> reader_;
};

}  // namespace

Runner AddServeCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* s = app.add_subcommand(
      "serve",
      "The daemon: Prometheus /metrics, JSON API, live dashboard, history (docs/serve.md)");
  s->add_option("--config", args->config,
                "YAML file of these options (flags win); SIGHUP re-reads it");
  s->add_option("--listen", args->listen,
                "HOST:PORT to serve on (default 127.0.0.1:9835; only this machine)");
  s->add_option("--hostname", args->hostname, "The hostname label (default: this machine's name)");
  s->add_option("--allow-host", args->allow_hosts,
                "A Host name to answer besides this machine's own names and addresses (the "
                "name Prometheus or a browser uses; repeat, or * for any)")
      ->delimiter(',');
  s->add_option("--web-config", args->web_config,
                "TLS and basic auth, Prometheus exporter-toolkit format; re-read when it changes");
  s->add_option("-i,--interval", args->interval, "Time between samples (default 1s)");
  AddPipelineOptions(*s, args->outputs);
  s->add_flag("--process-metrics", args->process_metrics,
              "Per-process series on /metrics (pid, command)");
  s->add_flag("--process-user", args->process_user, "... with the user of each process");
  s->add_flag("--dcgm-compat", args->dcgm_compat,
              "Also dcgm-exporter's metric names and units (existing Grafana dashboards)");
  s->add_option("--socket", args->socket,
                "A Unix socket where training jobs report framework memory and marks "
                "(GPUWATCH_SOCKET=PATH; docs/serve.md)");
  return [s, &common, args]() -> int {
    if (!s->parsed()) return -1;
    ServeArgs a = *args;
    if (!a.config.empty()) {
      if (Status st = LoadConfig(a.config, a, *s); !st.ok()) {
        std::cerr << "gpuwatch serve: " << st.message() << "\n";
        return kExitUsage;
      }
    }
    Daemon daemon(common, std::move(a), *s);
    return daemon.Run();
  };
}

}  // namespace gpuwatch::cli
