// `gpuwatch top`: the live terminal view (src/tui) of this machine's GPUs,
// the demo fleet, a scenario, a recording, remote daemons (--remote) or
// every host a Prometheus scrapes (--prometheus).
#include <malloc.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "engine/signals.h"
#include "gpuwatch/units.h"
#include "tui/app.h"
#include "tui/feed.h"
#include "tui/terminal.h"
#if GPUWATCH_TUI_HTTP
#include "tui/prometheus_fleet.h"
#include "tui/remote_api.h"
#endif

namespace gpuwatch::cli {
namespace {

struct TopArgs {
  std::string interval = "1s";
  std::string theme;
  bool readonly = false;
  bool ascii = false;
  bool no_mouse = false;
  std::string rules;
  std::string remote;
  std::string remote_user;
  std::string remote_password_file;
  std::string remote_ca;
  bool remote_insecure = false;
  std::string prometheus;
  bool remote_given = false;  // also when given empty: that is a mistake to name
  bool prometheus_given = false;
};

// The source the flags name, checked before the terminal is (a bad URL is
// said as such, also without a terminal).
struct TopSource {
  bool remote = false;
  bool prometheus = false;
#if GPUWATCH_TUI_HTTP
  tui::PrometheusSource prometheus_source;
  std::vector<tui::RemoteEndpoint> endpoints;
#endif
};

Result<tui::Theme> ThemeOf(const std::string& name) {
  if (name == "dark") return tui::Theme::kDark;
  if (name == "light") return tui::Theme::kLight;
  if (name == "mono") return tui::Theme::kMono;
  return Status::InvalidArgument("--theme: \"" + name + "\" is not a theme (dark, light, mono)");
}

#if GPUWATCH_TUI_HTTP
// The password for --remote-user: from --remote-password-file, else
// $GPUWATCH_REMOTE_PASSWORD (never on the command line, where ps shows it).
Result<std::string> RemotePassword(const TopArgs& a) {
  if (!a.remote_password_file.empty()) {
    std::ifstream in(a.remote_password_file);
    std::string line;
    if (!in || !std::getline(in, line)) {
      return Status::InvalidArgument("--remote-password-file: cannot read " +
                                     a.remote_password_file);
    }
    return line;
  }
  const char* env = std::getenv("GPUWATCH_REMOTE_PASSWORD");
  return std::string(env ? env : "");
}
#endif

Result<TopSource> ParseSource(const CommonArgs& common, const TopArgs& a) {
  TopSource t;
  t.remote = a.remote_given;
  t.prometheus = a.prometheus_given;
  const bool local_flags = common.demo || !common.scenario.empty() || !common.replay.empty();
  if (t.remote + t.prometheus + local_flags > 1) {
    return Status::InvalidArgument(
        "--remote, --prometheus and --demo / --scenario / --replay each name the source: give one");
  }
  if (!t.remote && !t.prometheus) return t;
#if GPUWATCH_TUI_HTTP
  if (t.prometheus) {
    auto source = tui::ParsePrometheusUrl(a.prometheus);
    if (!source) return Status::InvalidArgument("--prometheus: " + source.error().message());
    t.prometheus_source = std::move(*source);
    return t;
  }
  auto endpoints = tui::ParseEndpoints(a.remote);
  if (!endpoints) return Status::InvalidArgument("--remote: " + endpoints.error().message());
  t.endpoints = std::move(*endpoints);
  return t;
#else
  return Status::InvalidArgument(
      "--remote and --prometheus need HTTP: this gpuwatch was built without cpp-httplib");
#endif
}

Result<std::unique_ptr<tui::Feed>> OpenFeed(const CommonArgs& common, const TopArgs& a,
                                            TopSource parsed, std::chrono::milliseconds interval) {
  auto warn = [](const std::string& message) {
    std::cerr << "gpuwatch: warning: " << message << "\n";
  };
  engine::PipelineOptions pipeline;
  pipeline.rules = a.rules;
  pipeline.log = [](std::string_view) {};  // alerts show in the events pane
#if GPUWATCH_TUI_HTTP
  if (parsed.remote || parsed.prometheus) {
    auto password = RemotePassword(a);
    if (!password) return password.error();
    if (parsed.prometheus) {
      tui::PrometheusSource& source = parsed.prometheus_source;
      source.user = a.remote_user;
      source.password = *password;
      source.ca_file = a.remote_ca;
      source.insecure = a.remote_insecure;
      return tui::StartPrometheusFeed(std::move(source), interval);
    }
    for (tui::RemoteEndpoint& e : parsed.endpoints) {
      e.user = a.remote_user;
      e.password = *password;
      e.ca_file = a.remote_ca;
      e.insecure = a.remote_insecure;
    }
    return tui::StartRemoteFeed(std::move(parsed.endpoints), interval);
  }
#endif
  if (!common.replay.empty()) {
    tui::ReplayFeedOptions options;
    options.path = common.replay;
    options.speed = common.replay_speed > 0 ? common.replay_speed : 1;
    options.pipeline = pipeline;
    options.pipeline.hostname = SourceHostname(common);
    return tui::StartReplayFeed(options, warn);
  }
  OpenWait wait;
  wait.slow = [](const std::string& what) {
    std::cerr << "gpuwatch: warning: " << what << " (a hung driver?); still waiting\n";
  };
  auto source = OpenSourceWaiting(common, wait);
  if (!source) return source.error();
  const bool demo = !source->demo_scenario.empty();
  tui::LocalFeedOptions options;
  options.interval = interval;
  options.pipeline = pipeline;
  options.pipeline.hostname = Hostname();
  std::string detail = engine::DemoLabel(*source);
  return tui::StartLocalFeed(std::move(*source), options,
                             demo ? tui::SourceKind::kDemo : tui::SourceKind::kLocal,
                             std::move(detail), Hostname(), warn);
}

int RunTop(const CommonArgs& common, const TopArgs& a) {
  auto interval = ParseDuration(a.interval);
  if (!interval) return UsageError("top", "--interval: " + interval.error().message());
  if (*interval < std::chrono::milliseconds(100)) {
    return UsageError("top", "--interval: the shortest interval for top is 100ms");
  }
  tui::Theme theme =
      std::getenv("NO_COLOR") && *std::getenv("NO_COLOR") ? tui::Theme::kMono : tui::Theme::kDark;
  if (!a.theme.empty()) {
    auto t = ThemeOf(a.theme);
    if (!t) return UsageError("top", t.error().message());
    theme = *t;
  }
  auto source = ParseSource(common, a);
  if (!source) return UsageError("top", source.error().message());
  // Before anything starts: a terminal that cannot show the view.
  if (auto problem = tui::TerminalProblem()) {
    std::cerr << "gpuwatch top: " << *problem
              << ": top needs a full-screen terminal; for plain lines use `gpuwatch -l 1` "
                 "(the status every second) or `gpuwatch watch`\n";
    return kExitUsage;
  }
  // A view kept open all day on a shared machine: one malloc arena per
  // thread (sampler, GPU readers, watchdog, feed, writers) would keep pages
  // each has touched; two arenas serve these mostly idle threads.
  mallopt(M_ARENA_MAX, 2);
  engine::CatchSignals();
  auto feed = OpenFeed(common, a, std::move(*source), *interval);
  if (!feed) {
    std::cerr << "gpuwatch top: " << feed.error().message() << "\n";
    return ExitStatusFor(feed.error());
  }
  tui::AppOptions options;
  options.theme = theme;
  options.readonly = a.readonly;
  options.ascii = a.ascii;
  options.mouse = !a.no_mouse;
  if (!common.host_proc.empty()) options.proc_dir = common.host_proc;
  auto code = tui::RunTop(**feed, options, [] {
    const int s = engine::PendingSignal();
    return s == 0 ? 0 : 128 + s;
  });
  (*feed)->Stop();
  if (!code) {
    std::cerr << "gpuwatch top: " << code.error().message() << "\n";
    return kExitUsage;
  }
  return *code;
}

}  // namespace

Runner AddTopCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<TopArgs>();
  CLI::App* t = app.add_subcommand(
      "top", "Live terminal view: GPUs, processes, charts, events; local, a recording, or remote");
  t->add_option("-i,--interval", args->interval, "Time between samples (default 1s)");
  t->add_option("--theme", args->theme, "dark, light or mono (default dark; mono with NO_COLOR)");
  t->add_flag("--readonly", args->readonly, "No signal keys");
  t->add_flag("--ascii", args->ascii, "ASCII glyphs only (bars, charts, lines)");
  t->add_flag("--no-mouse", args->no_mouse, "Leave the mouse to the terminal");
  t->add_option("--rules", args->rules, "Alert rules (docs/rules.md) for the local GPUs");
  t->add_option("--remote", args->remote,
                "gpuwatch serve daemons: host:port,... (https://host:port for TLS)");
  t->add_option("--remote-user", args->remote_user,
                "Basic auth user for --remote / --prometheus (password: "
                "$GPUWATCH_REMOTE_PASSWORD or --remote-password-file)");
  t->add_option("--remote-password-file", args->remote_password_file,
                "A file whose first line is the password");
  t->add_option("--remote-ca", args->remote_ca, "CA bundle to verify https daemons against");
  t->add_flag("--remote-insecure", args->remote_insecure, "Do not verify https certificates");
  t->add_option("--prometheus", args->prometheus,
                "Draw the fleet from the Prometheus that scrapes every gpuwatch (its URL)");
  return [t, &common, args]() -> int {
    if (!t->parsed()) return -1;
    args->remote_given = t->count("--remote") > 0;
    args->prometheus_given = t->count("--prometheus") > 0;
    return RunTop(common, *args);
  };
}

}  // namespace gpuwatch::cli
