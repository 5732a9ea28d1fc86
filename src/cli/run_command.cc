// `gpuwatch run [options] -- CMD ARGS`: start a job and follow its whole
// process tree on every GPU; report alerts and diagnoses while it runs, stop
// it at its --memory-limit, and print a summary (and write --json) when it
// ends. The exit status is the job's; SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to
// gpuwatch are forwarded to the job's process group. Without a usable driver
// the job still runs, unmonitored, after one warning (--require-gpu refuses).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "analysis/job/job_summary.h"
#include "cli/claim_options.h"
#include "cli/commands.h"
#include "cli/pipeline.h"
#include "cli/run_gpus.h"
#include "cli/run_outputs.h"
#include "cli/terminal.h"
#include "engine/job_session.h"
#include "engine/signals.h"
#include "export/lines.h"
#include "gpuwatch/units.h"
#include "report/report_html.h"

namespace gpuwatch::cli {
namespace {

// How long `run` waits for the driver's first answers before the job runs unmonitored.
constexpr auto kDriverWait = std::chrono::seconds(10);

struct RunArgs {
  std::string interval = "100ms";
  std::string gpus;
  ClaimOptions claim;
  std::string memory_limit;
  std::string grace = "10s";
  PipelineOptions outputs;
  std::string json;
  std::string report;
  bool quiet = false;
  bool require_gpu = false;
  std::vector<std::string> command;
};

int Usage(const std::string& message) {
  std::cerr << "gpuwatch run: " << message << "\n";
  return kExitUsage;
}

int RunRun(const CommonArgs& common, RunArgs args) {
  if (!common.replay.empty())
    return Usage("--replay plays a recording; a job needs the GPUs themselves");
  if (common.command) {
    if (!args.command.empty()) {
      return Usage(fmt::format("\"{}\" comes before the --: put the whole command after it",
                               args.command.front()));
    }
    args.command = *common.command;  // exactly what follows the first "--"
  }
  if (args.command.empty())
    return Usage("give the command to run after --, e.g. gpuwatch run -- python train.py");
  auto interval = ParseDuration(args.interval);
  if (!interval) return Usage("--interval: " + interval.error().message());
  if (*interval < std::chrono::milliseconds(10))
    return Usage("--interval: the shortest interval is 10ms");
  auto grace = ParseDuration(args.grace);
  if (!grace) return Usage("--grace: " + grace.error().message());
  std::optional<std::uint64_t> limit;
  if (!args.memory_limit.empty()) {
    auto l = ParseSize(args.memory_limit);
    if (!l) return Usage("--memory-limit: " + l.error().message());
    if (*l == 0) return Usage("--memory-limit: must be more than 0");
    limit = *l;
  }
  args.outputs.hostname = Hostname();
  Terminal terminal(std::cerr, "gpuwatch: ");
  if (args.quiet) {
    args.outputs.log = [](std::string_view) {};
  } else {
    args.outputs.log = [&terminal](std::string_view line) { terminal.Line(line); };
  }
  auto pipeline = Pipeline::Open(
      args.outputs, [](const std::string& m) { std::cerr << "gpuwatch: warning: " << m << "\n"; });
  if (!pipeline) return Usage(pipeline.error().message());
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> json_file(nullptr, &std::fclose);
  if (!args.json.empty()) {
    json_file.reset(std::fopen(args.json.c_str(), "w"));
    if (!json_file)
      return Usage(fmt::format("--json: cannot write {}: {}", args.json, std::strerror(errno)));
  }

  if (!args.report.empty()) {
    for (const Status& s : {report::CheckCanRender(), report::CheckWritable(args.report)}) {
      if (!s.ok()) return Usage("--report: " + s.message());
    }
  }
  auto auto_count = AutoCount(args.gpus);
  if (!auto_count) return Usage(auto_count.error().message());
  std::optional<ClaimRequest> claim;
  if (*auto_count) {
    auto request = RunClaimRequest(args.claim, **auto_count, args.command);
    if (!request) return Usage(request.error().message());
    claim = std::move(*request);
  } else if (AnyLimit(args.claim)) {
    return Usage(
        "--min-free, --max-util, --max-memory-util, --exclude, --order, --account-as-free and "
        "--wait choose GPUs: use them with --gpus auto:N");
  }

  // A monitor never stands between a job and its GPUs: without a usable
  // driver the job runs unmonitored, unless the user asked otherwise. Choosing
  // and leasing GPUs (auto:N) cannot be done without one.
  // A driver that does not answer its first calls within 10 s is not usable
  // either: the job is not held back by it.
  OpenWait wait;
  wait.until = std::chrono::steady_clock::now() + kDriverWait;
  auto source = OpenSourceWaiting(common, wait);
  std::string unmonitored;  // why, when the job runs without GPU monitoring
  if (!source) {
    const bool usage = source.error().code() == Status::Code::kInvalidArgument;
    if (usage || args.require_gpu || claim) {
      if (claim && !usage && !args.require_gpu) {
        std::cerr << "gpuwatch run: --gpus " << args.gpus
                  << " chooses and leases GPUs through the driver, which is not usable; name the "
                     "GPUs (--gpus 0,1) to run the job unmonitored\n";
      }
      std::cerr << "gpuwatch: " << source.error().message() << "\n";
      return ExitStatusFor(source.error());
    }
    unmonitored = OneLineReason(source.error());
    std::cerr << UnmonitoredWarning(unmonitored) << "\n";  // said even with --quiet
  }
  engine::JobOptions job;
  // No exit guard: after forwarding a signal, run waits for its job.
  engine::CatchSignals({SIGINT, SIGTERM, SIGHUP, SIGQUIT}, /*exit_guard=*/false);
  std::optional<HeldLeases> held;
  std::optional<JobLease> job_lease;
  if (claim) {
    if (auto refused = GrantClaim(*source, *claim, args.quiet, terminal, job, held, job_lease)) {
      return *refused;
    }
  } else if (!args.gpus.empty()) {
    if (Status st = NamedGpus(
            args.gpus, source ? std::optional(source->backend->DeviceCount()) : std::nullopt, job);
        !st.ok()) {
      return Usage(st.message());
    }
  }
  if (source && !source->demo_scenario.empty()) {
    terminal.Line("DEMO: simulated GPUs (" + source->demo_scenario + ")");
  }
  const std::string demo_scenario = source ? source->demo_scenario : std::string();
  job.command = args.command;
  job.interval = *interval;
  job.memory_limit = limit;
  job.grace = *grace;
  job.proc_dir = common.host_proc.empty() ? "/proc" : common.host_proc;
  engine::JobHooks hooks;
  hooks.take_signal = engine::TakeSignal;
  hooks.event = [&](const Event& e) {
    if (engine::NotableJobEvent(e) && !args.quiet) terminal.Line(EventLogLine(e));
  };
  hooks.notice = [&](const std::string& line) {
    if (!args.quiet) terminal.Line(line);
  };
  hooks.warning = [&](const std::string& line) { terminal.Line(line); };
  std::optional<Source> monitored;
  if (source) monitored = std::move(*source);
  auto outcome = engine::RunJob(job, std::move(monitored), **pipeline, held, hooks);
  if (!outcome) {
    std::cerr << "gpuwatch: " << outcome.error().message() << "\n";
    return kExitFailure;
  }
  if (!outcome->exit_status) {
    std::cerr << "gpuwatch run: " << outcome->spawn_error.message() << "\n";
    return 127;
  }
  JobReport& job_report = outcome->report;
  job_report.lease = job_lease;
  job_report.unmonitored = unmonitored;
  if (!unmonitored.empty() && job_report.leaks.empty()) {
    job_report.leak_verdict = "not checked: the GPUs were not monitored";
  }
  WriteJobOutputs(job_report, outcome->recorder,
                  {args.command, args.outputs.hostname, demo_scenario, args.report, args.quiet},
                  json_file.get());
  return *outcome->exit_status;
}

}  // namespace

Runner AddRunCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* r = app.add_subcommand(
      "run", "Run a job and follow its GPU use: alerts, memory limit, a summary at the end");
  r->add_option("-i,--interval", args->interval,
                "Time between samples (default 100ms, enough to catch spikes)");
  r->add_option("--gpus", args->gpus,
                "Only these GPUs (indices or UUIDs), or auto:N: the N least busy, leased until "
                "the job ends (docs/select.md). Sets CUDA_VISIBLE_DEVICES in PCI order");
  AddClaimOptions(*r, args->claim);
  r->add_option("--memory-limit", args->memory_limit,
                "GPU memory budget of the job (e.g. 40GiB): warn at 90 %, SIGTERM at 100 %, "
                "SIGKILL after --grace");
  r->add_option("--grace", args->grace,
                "Time between SIGTERM and SIGKILL for --memory-limit (default 10s)");
  AddPipelineOptions(*r, args->outputs);
  r->add_option("--json", args->json,
                "Write the end-of-job summary as JSON to FILE (schema gpuwatch.run/1)");
  r->add_option("--report", args->report,
                "Write the HTML report (charts, events, summary; one self-contained file) to FILE");
  r->add_flag("-q,--quiet", args->quiet,
              "Print nothing of gpuwatch's own (the job's output is untouched)");
  r->add_flag("--require-gpu", args->require_gpu,
              "Refuse to start the job when the GPUs cannot be monitored (no usable driver); by "
              "default it then runs unmonitored after a warning");
  r->add_option("command", args->command, "The job: a program and its arguments, after --")
      ->take_all();
  return [r, &common, args]() -> int {
    if (!r->parsed()) return -1;
    return RunRun(common, *args);
  };
}

}  // namespace gpuwatch::cli
