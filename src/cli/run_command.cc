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
#include "cli/log_colors.h"
#include "cli/pipeline.h"
#include "cli/run_args.h"
#include "cli/run_gpus.h"
#include "cli/run_outputs.h"
#include "cli/terminal.h"
#include "engine/job_session.h"
#include "engine/signals.h"
#include "export/lines.h"
#include "report/report_html.h"

namespace gpuwatch::cli {
namespace {

// How long `run` waits for the driver's first answers before the job runs unmonitored.
constexpr auto kDriverWait = std::chrono::seconds(10);

int RunRun(const CommonArgs& common, RunArgs args) {
  engine::JobOptions job;
  if (Status st = CheckRunArgs(common, args, job); !st.ok()) return UsageError("run", st.message());
  args.outputs.hostname = Hostname();
  Terminal terminal(std::cerr, "gpuwatch: ");
  const LogColors colors(UseColor(common, STDERR_FILENO));
  if (args.quiet) {
    args.outputs.log = [](std::string_view) {};
  } else {
    args.outputs.log = [&terminal, &colors](std::string_view line) {
      terminal.Line(colors.Logged(line));
    };
  }
  auto pipeline = Pipeline::Open(
      args.outputs, [](const std::string& m) { std::cerr << "gpuwatch: warning: " << m << "\n"; });
  if (!pipeline) return UsageError("run", pipeline.error().message());
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> json_file(nullptr, &std::fclose);
  if (!args.json.empty()) {
    json_file.reset(std::fopen(args.json.c_str(), "w"));
    if (!json_file)
      return UsageError(
          "run", fmt::format("--json: cannot write {}: {}", args.json, std::strerror(errno)));
  }

  if (!args.report.empty()) {
    for (const Status& s : {report::CheckCanRender(), report::CheckWritable(args.report)}) {
      if (!s.ok()) return UsageError("run", "--report: " + s.message());
    }
  }
  auto auto_count = AutoCount(args.gpus);
  if (!auto_count) return UsageError("run", auto_count.error().message());
  std::optional<ClaimRequest> claim;
  if (*auto_count) {
    auto request = RunClaimRequest(args.claim, **auto_count, args.command);
    if (!request) return UsageError("run", request.error().message());
    claim = std::move(*request);
  } else if (AnyLimit(args.claim)) {
    return UsageError(
        "run",
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
      return UsageError("run", st.message());
    }
  }
  if (source && !engine::SourceBanner(*source).empty()) {
    terminal.Line(engine::SourceBanner(*source));
  }
  const std::string demo_scenario = source ? source->demo_scenario : std::string();
  job.proc_dir = common.host_proc.empty() ? "/proc" : common.host_proc;
  engine::JobHooks hooks;
  hooks.take_signal = engine::TakeSignal;
  hooks.event = [&](const Event& e) {
    if (engine::NotableJobEvent(e) && !args.quiet) terminal.Line(colors.Event(e, EventLogLine(e)));
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
  AddRunOptions(*r, *args);
  return [r, &common, args]() -> int {
    if (!r->parsed()) return -1;
    return RunRun(common, *args);
  };
}

}  // namespace gpuwatch::cli
