// `gpuwatch top`: the live terminal view (src/tui) of this machine's GPUs,
// the demo fleet, a scenario, a recording, remote daemons (--remote) or
// every host a Prometheus scrapes (--prometheus).
#include <malloc.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/top_cli.h"
#include "engine/signals.h"
#include "gpuwatch/units.h"
#include "tui/app.h"
#include "tui/feed.h"
#include "tui/terminal.h"

namespace gpuwatch::cli {
namespace {

struct TopArgs {
  std::string interval = "1s";
  std::string theme;
  bool readonly = false;
  bool ascii = false;
  bool no_mouse = false;
  std::string rules;
  TopRemoteArgs remote;
  ParseRemote parse_remote;  // null: none here (top_cli.h)
};

// The source the flags name, checked before the terminal is (a bad URL is
// said as such, also without a terminal): remote daemons or Prometheus, or
// else this machine, the demo, a scenario or a recording.
struct TopSource {
  StartTopFeed remote;  // empty: local
};

Result<tui::Theme> ThemeOf(const std::string& name) {
  if (name == "dark") return tui::Theme::kDark;
  if (name == "light") return tui::Theme::kLight;
  if (name == "mono") return tui::Theme::kMono;
  return Status::InvalidArgument("--theme: \"" + name + "\" is not a theme (dark, light, mono)");
}

Result<TopSource> ParseSource(const CommonArgs& common, const TopArgs& a) {
  const bool local_flags = common.demo || !common.scenario.empty() || !common.replay.empty();
  if (a.remote.remote + a.remote.prometheus + local_flags > 1) {
    return Status::InvalidArgument(
        "--remote, --prometheus and --demo / --scenario / --replay each name the source: give one");
  }
  TopSource t;
  if (!a.remote.remote && !a.remote.prometheus) return t;
  if (!a.parse_remote) {
    return Status::InvalidArgument("--remote and --prometheus are gpuwatch-full's");
  }
  auto start = a.parse_remote(a.remote);
  if (!start) return start.error();
  t.remote = std::move(*start);
  return t;
}

Result<std::unique_ptr<tui::Feed>> OpenFeed(const CommonArgs& common, const TopArgs& a,
                                            TopSource parsed, std::chrono::milliseconds interval) {
  if (parsed.remote) return parsed.remote(interval);
  auto warn = [](const std::string& message) {
    std::cerr << "gpuwatch: warning: " << message << "\n";
  };
  engine::PipelineOptions pipeline;
  pipeline.rules = a.rules;
  pipeline.log = [](std::string_view) {};  // alerts show in the events pane
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
  // each has touched; these mostly idle threads share the main one.
  mallopt(M_ARENA_MAX, 1);
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

Runner AddTopCommand(CLI::App& app, const CommonArgs& common, ParseRemote parse_remote) {
  auto args = std::make_shared<TopArgs>();
  args->parse_remote = std::move(parse_remote);
  CLI::App* t = app.add_subcommand(
      "top", "Live terminal view: GPUs, processes, charts, events; local, a recording, or remote");
  t->add_option("-i,--interval", args->interval, "Time between samples (default 1s)");
  t->add_option("--theme", args->theme, "dark, light or mono (default dark; mono with NO_COLOR)");
  t->add_flag("--readonly", args->readonly, "No signal keys");
  t->add_flag("--ascii", args->ascii, "ASCII glyphs only (bars, charts, lines)");
  t->add_flag("--no-mouse", args->no_mouse, "Leave the mouse to the terminal");
  t->add_option("--rules", args->rules, "Alert rules (docs/rules.md) for the local GPUs");
  t->add_option("--remote", args->remote.remote_list,
                "gpuwatch serve daemons: host:port,... (https://host:port for TLS)");
  t->add_option("--remote-user", args->remote.user,
                "Basic auth user for --remote / --prometheus (password: "
                "$GPUWATCH_REMOTE_PASSWORD or --remote-password-file)");
  t->add_option("--remote-password-file", args->remote.password_file,
                "A file whose first line is the password");
  t->add_option("--remote-ca", args->remote.ca_file, "CA bundle to verify https daemons against");
  t->add_flag("--remote-insecure", args->remote.insecure, "Do not verify https certificates");
  t->add_option("--prometheus", args->remote.prometheus_url,
                "Draw the fleet from the Prometheus that scrapes every gpuwatch (its URL)");
  return [t, &common, args]() -> int {
    if (!t->parsed()) return -1;
    args->remote.remote = t->count("--remote") > 0;
    args->remote.prometheus = t->count("--prometheus") > 0;
    return RunTop(common, *args);
  };
}

}  // namespace gpuwatch::cli
