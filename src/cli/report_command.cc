// `gpuwatch report SOURCE -o report.html`: the job report from a recording
// (`--jsonl` JSON Lines or a `--db` SQLite history). The recording is played
// as fast as it can be read through the same code a live run uses; its
// events and marks are shown as they were recorded, the totals (starved,
// throttled) are derived again from its samples.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "analysis/diagnoses/diagnoses.h"
#include "analysis/job/job_summary.h"
#include "backends/replay/replay_backend.h"
#include "cli/commands.h"
#include "core/text_file.h"
#include "report/report_html.h"
#include "report/report_recorder.h"
#include "report/sweep_report.h"
#include "sampler/collect.h"

namespace gpuwatch::cli {
namespace {

struct ReportArgs {
  std::string source;
  std::string output;
  std::string title;
};

// Without -o: SOURCE with .html for its extension, beside it (never SOURCE itself).
std::string DefaultOutput(const std::string& source) {
  std::filesystem::path out(source);
  out.replace_extension(".html");
  if (out == std::filesystem::path(source)) out = source + ".report.html";
  return out.string();
}

// A sweep's document (`sweep --json FILE`, pretty-printed: its first line is
// "{") rather than a recording (JSON Lines: one whole object a line, or
// SQLite): nullopt for a recording.
// Only a regular file is looked into (what is not, /dev/zero or a FIFO, the
// recording's reader refuses by name), and only its first MiB.
std::optional<Result<nlohmann::json>> SweepDocument(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::string head(std::size_t{1} << 20, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const auto newline = head.find('\n');
  if (head.empty() || (newline == std::string::npos && !in.eof())) return std::nullopt;
  const std::string first = head.substr(0, newline);
  const auto begin = first.find_first_not_of(" \t\r");
  const auto end = first.find_last_not_of(" \t\r");
  const bool opening = begin != std::string::npos && first.substr(begin, end - begin + 1) == "{";
  if (!opening) {
    const auto one = nlohmann::json::parse(first, nullptr, /*allow_exceptions=*/false);
    if (!report::IsSweepDocument(one)) return std::nullopt;
  }
  auto text = ReadTextFile(path, std::size_t{256} << 20);
  if (!text) return Result<nlohmann::json>(text.error());
  try {
    return Result<nlohmann::json>(nlohmann::json::parse(*text));
  } catch (const nlohmann::json::parse_error& e) {
    return Result<nlohmann::json>(Status::InvalidArgument(fmt::format(
        "{}: not a sweep's JSON (gpuwatch sweep --json) nor a recording: at byte {}: {}", path,
        e.byte, e.what())));
  }
}

// The sweep's page from its document.
int RunSweepReport(const ReportArgs& args, const Result<nlohmann::json>& doc) {
  if (!doc) {
    std::cerr << "gpuwatch report: " << doc.error().message() << "\n";
    return kExitUsage;
  }
  auto page = report::RenderSweepHtml(*doc, args.source, args.title);
  if (!page) {
    std::cerr << "gpuwatch report: " << page.error().message() << "\n";
    return ExitStatusFor(page.error());
  }
  if (Status s = report::WriteFileAtomically(args.output, *page); !s.ok()) {
    std::cerr << "gpuwatch report: " << s.message() << "\n";
    return kExitFailure;
  }
  std::cerr << fmt::format("gpuwatch report: wrote {} (a sweep of {} run{})\n", args.output,
                           (*doc)["runs"].size(), (*doc)["runs"].size() == 1 ? "" : "s");
  return kExitOk;
}

int RunReport(const CommonArgs& common, ReportArgs args) {
  if (args.output.empty()) args.output = DefaultOutput(args.source);
  if (common.demo || !common.scenario.empty() || !common.replay.empty()) {
    std::cerr << "gpuwatch report: the recording is SOURCE; --demo, --scenario and --replay do "
                 "not apply\n";
    return kExitUsage;
  }
  if (Status s = report::CheckCanRender(); !s.ok()) {
    std::cerr << "gpuwatch report: " << s.message() << "\n";
    return kExitFailure;
  }
  if (Status s = report::CheckWritable(args.output); !s.ok()) {
    std::cerr << "gpuwatch report: -o: " << s.message() << "\n";
    return kExitUsage;
  }
  if (auto sweep = SweepDocument(args.source)) return RunSweepReport(args, *sweep);
  auto opened = replay::ReplayBackend::Open({args.source, /*speed=*/0});
  if (!opened) {
    std::cerr << "gpuwatch report: " << opened.error().message() << "\n";
    return ExitStatusFor(opened.error());
  }
  replay::ReplayBackend& recording = **opened;
  for (const auto& note : recording.notes()) std::cerr << "gpuwatch report: note: " << note << "\n";

  report::ReportRecorder recorder;
  Diagnoser diagnoser;  // for the starved / throttled totals
  const auto first = recording.SampleTime().value_or(std::chrono::system_clock::time_point{});
  JobSummary summary({}, first, /*every_device=*/true);
  const auto& framework = recording.framework();
  auto next_framework = framework.begin();
  // Framework reports join the sample they follow, as they did live.
  auto framework_until = [&](std::optional<std::chrono::system_clock::time_point> until) {
    for (; next_framework != framework.end() && (!until || next_framework->time < *until);
         ++next_framework) {
      const std::map<std::string, double, std::less<>> bytes(next_framework->bytes.begin(),
                                                             next_framework->bytes.end());
      recorder.AddFramework(next_framework->time, next_framework->gpu, next_framework->framework,
                            bytes);
      summary.AddFrameworkMemory(next_framework->gpu, next_framework->framework, bytes,
                                 next_framework->pid);
    }
  };
  std::chrono::system_clock::time_point last = first;
  while (true) {
    const Snapshot snap = CollectOnce(recording, nullptr, CollectOptions{});
    framework_until(snap.time);
    last = snap.time;
    std::set<std::uint32_t> pids;
    for (const auto& d : snap.devices) {
      for (const auto& p : d.processes) pids.insert(p.pid);
    }
    summary.Observe(snap, pids);
    recorder.Observe(snap, nullptr);
    (void)diagnoser.Observe(snap);  // its events were recorded; only its totals are used
    if (recording.Finished()) break;
  }
  framework_until(std::nullopt);
  for (const auto& e : recording.events()) {
    recorder.AddEvent(e);
    if (e.kind == Event::Kind::kMark) {
      const auto space = e.message.find(' ');
      summary.AddMark(e.source,
                      space == std::string::npos ? e.message : e.message.substr(space + 1));
    } else {
      summary.AddEvent(e);
    }
  }
  std::map<int, std::chrono::milliseconds> throttled;
  for (const auto& [gpu, t] : diagnoser.throttle_totals()) throttled[gpu] = t.any;
  const JobReport job = summary.Finish(last, std::nullopt, diagnoser.starved_totals(), throttled);

  const std::string name = std::filesystem::path(args.source).filename().string();
  const bool history = recording.format() == replay::ReplayBackend::Format::kHistory;
  report::ReportMeta meta;
  meta.title = args.title.empty() ? "gpuwatch report — " + name : args.title;
  meta.source = fmt::format("{} {}", history ? "history" : "recording", args.source);
  meta.hostname = recording.hostname();
  if (recording.info().demo) meta.demo = "recorded from the simulated demo fleet";
  auto page = report::RenderHtml(recorder.ToJson(meta, JobReportRows(job), JobReportToJson(job)));
  if (!page) {
    std::cerr << "gpuwatch report: " << page.error().message() << "\n";
    return kExitFailure;
  }
  if (Status s = report::WriteFileAtomically(args.output, *page); !s.ok()) {
    std::cerr << "gpuwatch report: " << s.message() << "\n";
    return kExitFailure;
  }
  const std::size_t samples = recording.samples(), events = recording.events().size();
  std::cerr << fmt::format("gpuwatch report: wrote {} ({} sample{}, {} event{})\n", args.output,
                           samples, samples == 1 ? "" : "s", events, events == 1 ? "" : "s");
  return kExitOk;
}

}  // namespace

Runner AddReportCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* r = app.add_subcommand(
      "report",
      "Write the HTML job report from a recording (--jsonl file or --db history), or a "
      "sweep's page from its --json");
  r->add_option("source", args->source,
                "The recording: a JSON Lines file or a SQLite history; or a sweep's JSON")
      ->required();
  r->add_option("-o,--output", args->output,
                "The HTML file to write (one self-contained file; default: SOURCE with .html for "
                "its extension)");
  r->add_option("--title", args->title, "Title of the report (default: from SOURCE)");
  return [r, &common, args]() -> int {
    if (!r->parsed()) return -1;
    return RunReport(common, *args);
  };
}

}  // namespace gpuwatch::cli
