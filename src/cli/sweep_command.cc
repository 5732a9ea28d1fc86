// `gpuwatch sweep [--values 8,16,32] [--search | --bisect | --until-oom |
// --concurrency 1,2,4] -- CMD ... {bs} ...`: runs the command once per value on one GPU
// (chosen and leased like `run --gpus auto:1`, or --gpus N), each run bounded
// by --steps and --seconds, and says how its memory grows, the largest value
// that fits with --margin, where it runs out of memory, or how many copies
// the GPU holds. Progress on stderr, the table on stdout, --json FILE.
// docs/sweep.md.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/claim_options.h"
#include "cli/commands.h"
#include "cli/run_gpus.h"
#include "cli/terminal.h"
#include "engine/signals.h"
#include "engine/sweep_session.h"
#include "gpuwatch/units.h"
#include "report/report_html.h"
#include "report/sweep_report.h"

namespace gpuwatch::cli {
namespace {

using Mode = sweep::SweepResult::Mode;

struct SweepArgs {
  std::string values;
  bool search = false;
  bool bisect = false;
  bool until_oom = false;
  std::string concurrency;
  std::uint64_t steps = 50;
  std::string seconds = "20s";
  std::string margin = "10%";
  int max_trials = 16;
  bool max_trials_given = false;  // else --bisect makes it 40
  long max_value = 1L << 20;
  std::string interval = "100ms";
  std::string gpus = "auto:1";
  ClaimOptions claim;
  std::string json;
  std::string report;  // the HTML page
  bool quiet = false;
  std::vector<std::string> command;
};

// "8,16,32": positive integers, each named by position when it is not one.
template <typename T>
Result<std::vector<T>> PositiveList(const std::string& flag, const std::string& text, T max) {
  std::vector<T> out;
  std::size_t at = 0, item = 1;
  while (at <= text.size()) {
    const auto comma = std::min(text.find(',', at), text.size());
    const std::string s = text.substr(at, comma - at);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || end != s.c_str() + s.size() || errno != 0 || v < 1 ||
        v > static_cast<long long>(max) || s.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument(
          fmt::format("{} \"{}\": item {} (\"{}\") is not a whole number from 1 to {}", flag, text,
                      item, s, max));
    }
    out.push_back(static_cast<T>(v));
    at = comma + 1;
    ++item;
  }
  return out;
}

// "10%", "10" (percent) or "0.1".
Result<double> Margin(const std::string& text) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size()) {
    return Status::InvalidArgument(
        fmt::format("--margin \"{}\": expected a percentage like 10%", text));
  }
  const double share = percent || v >= 1 ? v / 100 : v;
  if (share < 0 || share >= 1) {
    return Status::InvalidArgument(
        fmt::format("--margin \"{}\": must be from 0 % to under 100 %", text));
  }
  return share;
}

Result<engine::SweepPlan> Plan(const CommonArgs& common, SweepArgs& args,
                               engine::SweepRunOptions& run) {
  if (!common.replay.empty()) {
    return Status::InvalidArgument("--replay plays a recording; a sweep runs jobs on the GPUs");
  }
  if (common.command) {
    if (!args.command.empty()) {
      return Status::InvalidArgument(fmt::format(
          "\"{}\" comes before the --: put the whole command after it", args.command.front()));
    }
    args.command = *common.command;
  }
  if (args.command.empty()) {
    return Status::InvalidArgument(
        "give the command after --, with {bs} where the value goes, e.g. gpuwatch sweep -- "
        "python train.py --batch-size {bs}");
  }
  engine::SweepPlan plan;
  const int modes = args.search + args.bisect + args.until_oom + !args.concurrency.empty();
  if (modes > 1) {
    return Status::InvalidArgument(
        "choose one of --search, --bisect, --until-oom and --concurrency");
  }
  plan.mode = args.search                 ? Mode::kSearch
              : args.bisect               ? Mode::kBisect
              : args.until_oom            ? Mode::kUntilOom
              : !args.concurrency.empty() ? Mode::kConcurrency
                                          : Mode::kValues;
  const bool placeholder = engine::HasPlaceholder(args.command);
  if (plan.mode == Mode::kConcurrency) {
    auto levels = PositiveList<int>("--concurrency", args.concurrency, 64);
    if (!levels) return levels.error();
    if (!std::is_sorted(levels->begin(), levels->end()) ||
        std::adjacent_find(levels->begin(), levels->end()) != levels->end()) {
      return Status::InvalidArgument(fmt::format(
          "--concurrency \"{}\": give the levels in increasing order", args.concurrency));
    }
    plan.concurrency = *levels;
    if (placeholder) {
      if (args.values.empty()) {
        return Status::InvalidArgument("--concurrency runs copies at one value: give --values N");
      }
      auto v = PositiveList<long>("--values", args.values, args.max_value);
      if (!v) return v.error();
      if (v->size() != 1) {
        return Status::InvalidArgument(
            fmt::format("--concurrency runs copies at one value; --values \"{}\" gives {}",
                        args.values, v->size()));
      }
      plan.values = *v;
    } else if (!args.values.empty()) {
      return Status::InvalidArgument("--values: the command has no {bs} to put them in");
    }
  } else {
    if (!placeholder) {
      return Status::InvalidArgument(fmt::format(
          "the command has no {{bs}} for the values to go in: \"{}\"", args.command.front()));
    }
    // Without --values: 8, 16 and two runs the fit places towards the edge;
    // --bisect doubles from 8, as Lightning's BatchSizeFinder would.
    const bool bisect = plan.mode == Mode::kBisect;
    auto v = PositiveList<long>("--values",
                                !args.values.empty() ? args.values
                                : bisect             ? "8"
                                                     : "8,16",
                                args.max_value);
    if (!v) return v.error();
    plan.values = *v;
    if (args.values.empty() && !bisect) plan.placed = 2;
  }
  auto margin = Margin(args.margin);
  if (!margin) return margin.error();
  plan.margin = *margin;
  if (plan.mode == Mode::kBisect && !args.max_trials_given) args.max_trials = 40;
  if (args.max_trials < 1) return Status::InvalidArgument("--max-trials: must be 1 or more");
  plan.max_trials = args.max_trials;
  plan.max_value = args.max_value;
  auto seconds = ParseDuration(args.seconds);
  if (!seconds) return Status::InvalidArgument("--seconds: " + seconds.error().message());
  if (*seconds < std::chrono::milliseconds(100)) {
    return Status::InvalidArgument("--seconds: the shortest bound is 100ms");
  }
  auto interval = ParseDuration(args.interval);
  if (!interval) return Status::InvalidArgument("--interval: " + interval.error().message());
  if (*interval < std::chrono::milliseconds(10)) {
    return Status::InvalidArgument("--interval: the shortest interval is 10ms");
  }
  run.command = args.command;
  run.steps = args.steps;
  run.seconds = std::chrono::duration_cast<std::chrono::milliseconds>(*seconds);
  run.interval = std::chrono::duration_cast<std::chrono::milliseconds>(*interval);
  run.proc_dir = common.host_proc.empty() ? "/proc" : common.host_proc;
  return plan;
}

int RunSweepCommand(const CommonArgs& common, SweepArgs args) {
  engine::SweepRunOptions run;
  auto plan = Plan(common, args, run);
  if (!plan) return UsageError("sweep", plan.error().message());
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> json_file(nullptr, &std::fclose);
  if (!args.json.empty() && args.json != "-") {
    json_file.reset(std::fopen(args.json.c_str(), "w"));
    if (!json_file) {
      return UsageError(
          "sweep", fmt::format("--json: cannot write {}: {}", args.json, std::strerror(errno)));
    }
  }
  if (!args.report.empty()) {
    if (Status s = report::CheckCanRender(); !s.ok()) {
      std::cerr << "gpuwatch sweep: " << s.message() << "\n";
      return kExitFailure;
    }
    if (Status s = report::CheckWritable(args.report); !s.ok()) {
      return UsageError("sweep", "--report: " + s.message());
    }
  }
  auto auto_count = AutoCount(args.gpus);
  if (!auto_count) return UsageError("sweep", auto_count.error().message());
  if (*auto_count && **auto_count != 1) {
    return UsageError(
        "sweep", fmt::format("--gpus {}: a sweep runs on one GPU (auto:1 or an index)", args.gpus));
  }
  if (!*auto_count && args.gpus.find_first_not_of("0123456789") != std::string::npos) {
    return UsageError("sweep",
                      fmt::format("--gpus \"{}\": give one GPU index, or auto:1", args.gpus));
  }
  Terminal terminal(std::cerr, "gpuwatch: ");
  OpenWait wait;
  wait.until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto source = OpenSourceWaiting(common, wait);
  if (!source) {
    std::cerr << "gpuwatch: " << source.error().message() << "\n";
    return ExitStatusFor(source.error());
  }
  engine::CatchSignals({SIGINT, SIGTERM, SIGHUP, SIGQUIT}, /*exit_guard=*/false);
  engine::JobOptions job;  // what the claim or --gpus gives the runs
  std::optional<HeldLeases> held;
  std::optional<JobLease> lease;
  if (*auto_count) {
    auto request = RunClaimRequest(args.claim, 1, args.command);
    if (!request) return UsageError("sweep", request.error().message());
    if (auto refused = GrantClaim(*source, *request, args.quiet, terminal, job, held, lease)) {
      return *refused;
    }
  } else {
    if (AnyLimit(args.claim)) {
      return UsageError("sweep",
                        "--min-free, --max-util and the other choosing options need --gpus auto:1");
    }
    if (Status st = NamedGpus(args.gpus, source->backend->DeviceCount(), job); !st.ok()) {
      return UsageError("sweep", st.message());
    }
  }
  run.env = job.env;
  run.gpu = job.cuda_to_nvml.empty() ? 0 : job.cuda_to_nvml.front();
  const std::string banner = engine::SourceBanner(*source);
  if (!banner.empty() && !args.quiet) terminal.Line(banner);
  const bool demo = !source->demo_scenario.empty();
  std::error_code ec;
  const auto work =
      std::filesystem::temp_directory_path(ec) / fmt::format("gpuwatch-sweep-{}", getpid());
  std::filesystem::create_directories(work, ec);
  run.work_dir = work;
  auto runner = engine::SweepRunner::Start(std::move(*source), run);
  if (!runner) {
    std::filesystem::remove_all(work, ec);
    std::cerr << "gpuwatch sweep: " << runner.error().message() << "\n";
    return ExitStatusFor(runner.error());
  }
  engine::SweepHooks hooks;
  hooks.stop = engine::TakeSignal;
  if (!args.quiet) {
    hooks.starting = [&](long value, int copies) {
      terminal.Line(copies > 1 || value == 0
                        ? fmt::format("running {} {} ...", copies, copies == 1 ? "copy" : "copies")
                        : fmt::format("running bs {} ...", value));
    };
    hooks.progress = [&](const sweep::RunRecord& r) { terminal.Line(sweep::ProgressLine(r)); };
  }
  sweep::SweepResult result = engine::RunSweep(**runner, *plan, hooks);
  runner->reset();
  std::filesystem::remove_all(work, ec);
  result.command = args.command;
  result.gpu = run.gpu;
  result.demo = demo;
  const nlohmann::json document = sweep::SweepToJson(result);
  const std::string doc = document.dump(2) + "\n";
  if (args.json == "-") {
    std::cout << doc;
  } else {
    std::cout << sweep::RenderSweep(result) << std::flush;
    if (json_file) std::fputs(doc.c_str(), json_file.get());
  }
  for (const auto& r : result.runs) {
    for (const auto& c : r.copy) {
      if (c.verdict == sweep::RunVerdict::kFailed && !c.output_tail.empty()) {
        std::cerr << "gpuwatch sweep: the end of what pid " << c.pid << " printed:\n"
                  << c.output_tail << (c.output_tail.back() == '\n' ? "" : "\n");
      }
    }
  }
  if (!args.report.empty()) {
    auto page = report::RenderSweepHtml(document, "the sweep", "");
    Status written = page ? report::WriteFileAtomically(args.report, *page) : page.error();
    if (!written.ok()) {
      std::cerr << "gpuwatch sweep: --report: " << written.message() << "\n";
      return kExitFailure;
    }
    if (!args.quiet) terminal.Line("wrote " + args.report);
  }
  if (!result.stopped.empty()) {
    std::cerr << "gpuwatch sweep: stopped: " << result.stopped << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

Runner AddSweepCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* s = app.add_subcommand(
      "sweep",
      "Run a job at several batch sizes: memory fit, largest batch, OOM boundary, jobs "
      "per GPU");
  s->add_option(
      "--values", args->values,
      "Values for {bs} in the command, in order (default 8, 16, then two placed by their fit: "
      "an eighth and a quarter of its largest batch, at least doubling)");
  s->add_flag("--search", args->search,
              "Then find the out-of-memory boundary: predicted from the fit, confirmed around it");
  s->add_flag("--bisect", args->bisect,
              "Then find the boundary by doubling from the first value (default 8) and "
              "bisection, without the fit (Lightning's BatchSizeFinder; what --search is "
              "measured against)");
  s->add_flag("--until-oom", args->until_oom,
              "Then double the value until the first out-of-memory (a stress test)");
  s->add_option("--concurrency", args->concurrency,
                "Run N copies at once instead (e.g. 1,2,3,4): how many the GPU holds");
  s->add_option("--steps", args->steps,
                "Step marks (GPUWATCH_SOCKET) that end a run (default 50; 0: only --seconds)");
  s->add_option("--seconds", args->seconds, "The longest a run lasts (default 20s)");
  s->add_option("--margin", args->margin,
                "Free memory kept back for the largest batch (default 10%)");
  CLI::Option* max_trials = s->add_option(
      "--max-trials", args->max_trials,
      "Runs --search, --bisect and --until-oom may make, the values included (default "
      "16; 40 for --bisect)");
  s->add_option("--max-value", args->max_value, "The largest value tried (default 1048576)");
  s->add_option("-i,--interval", args->interval, "Time between samples (default 100ms)");
  s->add_option("--gpus", args->gpus,
                "The GPU: auto:1 (the least busy, leased while the sweep runs; the default) or "
                "an index");
  AddClaimOptions(*s, args->claim);
  s->add_option("--json", args->json,
                "Write the result as JSON to FILE, - for stdout instead of the table "
                "(schema gpuwatch.sweep/1)");
  s->add_option("--report", args->report,
                "Write the HTML page to FILE: memory against the value with the fit and the "
                "boundary, throughput against copies (one self-contained file)");
  s->add_flag("-q,--quiet", args->quiet, "No progress lines on stderr");
  s->add_option("command", args->command, "The job, after --, with {bs} where the value goes")
      ->take_all();
  return [s, &common, args, max_trials]() -> int {
    if (!s->parsed()) return -1;
    args->max_trials_given = max_trials->count() > 0;
    return RunSweepCommand(common, *args);
  };
}

}  // namespace gpuwatch::cli
