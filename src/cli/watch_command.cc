// `gpuwatch watch`: sample every GPU at an interval until Ctrl-C or
// --duration; print log lines and events (alerts, diagnoses, leaks), write
// CSV / JSON Lines / SQLite history. --quiet leaves the events only.
// Every snapshot goes through the pipeline once, in order: with --replay every
// recorded sample, at the pace --replay-speed sets (-i does not apply).
// Ctrl-C flushes every output before exit.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/log_colors.h"
#include "cli/pipeline.h"
#include "cli/terminal.h"
#include "engine/signals.h"
#include "export/lines.h"
#include "gpuwatch/units.h"
#include "sampler/sampler.h"

namespace gpuwatch::cli {
namespace {

struct WatchArgs {
  std::string interval = "1s";
  std::string duration;
  PipelineOptions outputs;
  bool quiet = false;
};

int OptionError(std::string_view option, const Status& why) {
  std::cerr << "gpuwatch watch: " << option << ": " << why.message() << "\n";
  return kExitUsage;
}

int RunWatch(const CommonArgs& common, WatchArgs args) {
  auto interval = ParseDuration(args.interval);
  if (!interval) return OptionError("--interval", interval.error());
  if (*interval < std::chrono::milliseconds(10)) {
    std::cerr << "gpuwatch watch: --interval: the shortest interval is 10ms\n";
    return kExitUsage;
  }
  std::optional<std::chrono::milliseconds> duration;
  if (!args.duration.empty()) {
    auto d = ParseDuration(args.duration);
    if (!d) return OptionError("--duration", d.error());
    duration = *d;
  }
  args.outputs.hostname = SourceHostname(common);  // a replay keeps the recorded machine's
  Terminal terminal(std::cout);
  const LogColors colors(UseColor(common));
  args.outputs.log = [&terminal, &colors](std::string_view line) {
    terminal.Line(colors.Logged(line));
  };
  auto pipeline = Pipeline::Open(args.outputs, [](const std::string& message) {
    std::cerr << "gpuwatch: warning: " << message << "\n";
  });
  if (!pipeline) {
    std::cerr << "gpuwatch watch: " << pipeline.error().message() << "\n";
    return kExitUsage;
  }

  engine::CatchSignals();
  const auto deadline =
      duration ? std::optional(std::chrono::steady_clock::now() + *duration) : std::nullopt;
  OpenWait wait;
  wait.until = deadline;
  wait.slow = [](const std::string& what) {
    std::cerr << "gpuwatch: warning: " << what << " (a hung driver?); still waiting\n";
  };
  auto source = OpenSourceWaiting(common, wait);
  if (!source && engine::PendingSignal() != 0) {
    std::cerr << "gpuwatch: " << source.error().message() << "\n";
    return 128 + engine::TakeSignal();
  }
  if (!source) {
    std::cerr << "gpuwatch: " << source.error().message() << "\n";
    return ExitStatusFor(source.error());
  }
  if (const std::string banner = engine::SourceBanner(*source); !banner.empty()) {
    std::cout << banner << "\n";
  }
  SamplerOptions options;
  options.interval = *interval;
  Sampler sampler(std::move(source->backend), std::move(source->resolver), options);
  const std::unique_ptr<Sampler::Follower> follower = sampler.Follow();
  sampler.Start();

  while (engine::PendingSignal() == 0 &&
         (!deadline || std::chrono::steady_clock::now() < *deadline)) {
    auto snap = follower->Next(std::chrono::milliseconds(100));
    if (!snap) {
      if (follower->done()) break;  // a recording played to its end
      continue;
    }
    if (!args.quiet) {
      for (const auto& d : snap->devices) terminal.Line(colors.Sample(d, LogLine(*snap, d)));
    }
    for (const auto& e : (*pipeline)->Observe(snap)) {
      // Alerts are written by their rules' `log` action.
      const bool alert =
          e.kind == Event::Kind::kAlertFiring || e.kind == Event::Kind::kAlertResolved;
      if (!alert) terminal.Line(colors.Event(e, EventLogLine(e)));
    }
  }
  sampler.Stop();
  (*pipeline)->Close();  // every output flushed
  if (const std::uint64_t missed = follower->missed(); missed > 0) {
    std::cerr << fmt::format(
        "gpuwatch: warning: {} sample(s) not analysed or written: the outputs fell {} samples "
        "behind the GPUs\n",
        missed, RingSize(options));
  }
  return kExitOk;
}

}  // namespace

Runner AddWatchCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* w = app.add_subcommand(
      "watch", "Sample every GPU until Ctrl-C: log lines, alerts, leaks, CSV, JSON Lines, SQLite");
  w->add_option("-i,--interval", args->interval,
                "Time between samples (10ms and up; e.g. 500ms, 1s)");
  w->add_option("--duration", args->duration, "Stop after this long (e.g. 10m)");
  AddPipelineOptions(*w, args->outputs);
  w->add_flag("-q,--quiet", args->quiet,
              "Events only (alerts, diagnoses, leaks, GPUs lost): no line per GPU per sample");
  return [w, &common, args]() -> int {
    if (!w->parsed()) return -1;
    return RunWatch(common, *args);
  };
}

}  // namespace gpuwatch::cli
