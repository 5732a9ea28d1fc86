// `gpuwatch watch`: sample every GPU at an interval until Ctrl-C or
// --duration; print log lines, write CSV / JSON Lines, report events.
// Ctrl-C flushes every output before exit.
#include <fmt/format.h>

#include <csignal>
#include <iostream>
#include <memory>

#include "analysis/diagnoses/diagnoses.h"
#include "cli/commands.h"
#include "export/lines.h"
#include "gpuwatch/units.h"
#include "sampler/lifecycle.h"
#include "sampler/sampler.h"
#include "transport/line_file.h"

namespace gpuwatch::cli {
namespace {

struct WatchArgs {
  std::string interval = "1s";
  std::string duration;
  std::string csv;
  std::string jsonl;
  bool quiet = false;
};

volatile std::sig_atomic_t g_stop = 0;  // written by the signal handler only
extern "C" void OnStopSignal(int) { g_stop = 1; }

// Outputs of one watch, opened before sampling starts so a bad path fails first.
struct Outputs {
  std::unique_ptr<LineFile> csv;
  std::unique_ptr<LineFile> jsonl;
  bool wrote_jsonl_header = false;
};

int UsageError(std::string_view option, const Status& why) {
  std::cerr << "gpuwatch watch: " << option << ": " << why.message() << "\n";
  return kExitUsage;
}

Result<std::unique_ptr<LineFile>> OpenOutput(const std::string& path) {
  return LineFile::Open(path, [](const std::string& message) {
    std::cerr << "gpuwatch: warning: " << message << "\n";
  });
}

int RunWatch(const CommonArgs& common, const WatchArgs& args) {
  auto interval = ParseDuration(args.interval);
  if (!interval) return UsageError("--interval", interval.error());
  if (*interval < std::chrono::milliseconds(10)) {
    std::cerr << "gpuwatch watch: --interval: the shortest interval is 10ms\n";
    return kExitUsage;
  }
  std::optional<std::chrono::milliseconds> duration;
  if (!args.duration.empty()) {
    auto d = ParseDuration(args.duration);
    if (!d) return UsageError("--duration", d.error());
    duration = *d;
  }
  Outputs out;
  if (!args.csv.empty()) {
    auto f = OpenOutput(args.csv);
    if (!f) return UsageError("--csv", f.error());
    out.csv = std::move(*f);
    out.csv->Write(CsvHeader());
  }
  if (!args.jsonl.empty()) {
    auto f = OpenOutput(args.jsonl);
    if (!f) return UsageError("--jsonl", f.error());
    out.jsonl = std::move(*f);
  }

  auto source = OpenSource(common);
  if (!source) {
    std::cerr << "gpuwatch: " << source.error().message() << "\n";
    return kExitFailure;
  }
  if (!source->demo_scenario.empty()) {
    std::cout << "DEMO: simulated GPUs (" << source->demo_scenario
              << "), not this machine's hardware\n";
  }
  SamplerOptions options;
  options.interval = *interval;
  Sampler sampler(std::move(source->backend), std::move(source->resolver), options);
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  const auto deadline =
      duration ? std::optional(std::chrono::steady_clock::now() + *duration) : std::nullopt;
  sampler.Start();

  std::shared_ptr<const Snapshot> previous;
  const std::string hostname = Hostname();
  Diagnoser diagnoser;
  while (!g_stop && (!deadline || std::chrono::steady_clock::now() < *deadline)) {
    auto snap =
        sampler.WaitNewer(previous ? previous->sequence : 0, std::chrono::milliseconds(100));
    if (!snap) continue;
    if (!args.quiet) {
      for (const auto& d : snap->devices) std::cout << LogLine(*snap, d) << "\n";
    }
    std::vector<Event> events = LifecycleEvents(previous.get(), *snap);
    for (auto& e : diagnoser.Observe(*snap)) events.push_back(std::move(e));
    for (const auto& e : events) {
      if (!args.quiet) std::cout << EventLogLine(e) << "\n";
      if (out.jsonl) out.jsonl->Write(JsonlEvent(e));
    }
    std::cout << std::flush;
    if (out.csv) {
      for (auto& row : CsvRows(*snap)) out.csv->Write(std::move(row));
    }
    if (out.jsonl) {
      if (!out.wrote_jsonl_header) {
        out.jsonl->Write(JsonlHeader(*snap, hostname));
        out.wrote_jsonl_header = true;
      }
      out.jsonl->Write(JsonlSample(*snap));
    }
    previous = std::move(snap);
  }
  sampler.Stop();
  if (out.csv) out.csv->Close();
  if (out.jsonl) out.jsonl->Close();
  return kExitOk;
}

}  // namespace

Runner AddWatchCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* w =
      app.add_subcommand("watch", "Sample every GPU until Ctrl-C: log lines, CSV, JSON Lines");
  w->add_option("-i,--interval", args->interval,
                "Time between samples (10ms and up; e.g. 500ms, 1s)");
  w->add_option("--duration", args->duration, "Stop after this long (e.g. 10m)");
  w->add_option("--csv", args->csv,
                "Append one CSV row per GPU per sample to FILE (docs/outputs.md)");
  w->add_option("--jsonl", args->jsonl, "Append JSON Lines (schema gpuwatch.jsonl/1) to FILE");
  w->add_flag("-q,--quiet", args->quiet, "No log lines on the terminal");
  return [w, &common, args]() -> int {
    if (!w->parsed()) return -1;
    return RunWatch(common, *args);
  };
}

}  // namespace gpuwatch::cli
