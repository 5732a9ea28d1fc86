// `gpuwatch serve`: the flags and --config of the daemon (engine/daemon.h),
// and its signals: SIGTERM / SIGINT stop it cleanly; SIGHUP re-reads the
// config and rules. docs/serve.md.
#include <csignal>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/pipeline.h"
#include "cli/serve_config.h"
#include "engine/daemon.h"
#include "engine/signals.h"
#include "gpuwatch/units.h"
#include "server/http_server.h"

namespace gpuwatch::cli {
namespace {

void Log(const std::string& line) { std::cerr << "gpuwatch serve: " << line << std::endl; }

// The daemon's signals: SIGINT and SIGTERM stop it, SIGHUP reloads.
engine::DaemonRequest PollSignals() {
  const int sig = engine::TakeSignal();
  if (sig == SIGINT || sig == SIGTERM) return engine::DaemonRequest::kStop;
  if (sig == SIGHUP) return engine::DaemonRequest::kReload;
  return engine::DaemonRequest::kNone;
}

// SIGHUP: --config read again (flags given on the command line still win).
Result<engine::Reloaded> Reload(const ServeArgs& running, const CLI::App& command) {
  if (running.config.empty()) {
    Log("SIGHUP: no --config file; re-reading the rules");
    return engine::Reloaded{running.outputs, ""};
  }
  ServeArgs next = running;
  if (Status s = LoadConfig(running.config, next, command); !s.ok()) return s;
  engine::Reloaded r{next.outputs, ""};
  if (next.listen != running.listen || next.interval != running.interval)
    r.note = "SIGHUP: listen and interval changes take effect at the next start";
  return r;
}

int Serve(const CommonArgs& common, ServeArgs args, const CLI::App& command) {
  engine::DaemonOptions d;
  d.source = common;
  auto interval = ParseDuration(args.interval);
  if (!interval) return UsageError("serve", "--interval: " + interval.error().message());
  if (*interval < std::chrono::milliseconds(100))
    return UsageError("serve", "--interval: the daemon's shortest interval is 100ms");
  d.interval = *interval;
  if (Status s = server::ParseListen(args.listen, d.http.host, d.http.port); !s.ok())
    return UsageError("serve", s.message());
  d.http.metrics.process_metrics = args.process_metrics;
  d.http.metrics.process_user = args.process_user;
  d.http.metrics.dcgm_compat = args.dcgm_compat;
  d.http.metrics.nvidia_smi_compat = args.nvidia_smi_compat;
  d.http.allowed_hosts = args.allow_hosts;
  d.http.version = GPUWATCH_VERSION;
  d.outputs = args.outputs;
  d.hostname = args.hostname;
  d.socket = args.socket;
  d.web_config = args.web_config;
  engine::DaemonHooks hooks;
  hooks.poll = PollSignals;
  // Each reload compares with the configuration that runs (the last one loaded).
  auto running = std::make_shared<ServeArgs>(args);
  hooks.reload = [running, &command]() -> Result<engine::Reloaded> {
    auto r = Reload(*running, command);
    if (r) running->outputs = r->outputs;
    return r;
  };
  hooks.log = Log;
  engine::CatchSignals({SIGINT, SIGTERM, SIGHUP});
  const Status s = engine::RunDaemon(std::move(d), std::move(hooks));
  if (s.ok()) return kExitOk;
  std::cerr << "gpuwatch serve: " << s.message() << "\n";
  return ExitStatusFor(s);
}

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
  s->add_flag("--nvidia-smi-compat", args->nvidia_smi_compat,
              "Also nvidia_gpu_exporter's nvidia_smi_* metric names (existing Grafana dashboards)");
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
    return Serve(common, std::move(a), *s);
  };
}

}  // namespace gpuwatch::cli
