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
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "analysis/job/job_summary.h"
#include "analysis/job/memory_guard.h"
#include "cli/child_process.h"
#include "cli/claim_options.h"
#include "cli/commands.h"
#include "cli/pipeline.h"
#include "cli/signals.h"
#include "cli/terminal.h"
#include "export/lines.h"
#include "gpuwatch/units.h"
#include "host/process_tree.h"
#include "report/report_html.h"
#include "report/report_recorder.h"
#include "sampler/sampler.h"
#include "transport/job_socket.h"

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

// "0,2" or UUIDs, checked against the GPUs there are (when they are known).
Result<std::string> VisibleDevices(const std::string& spec, std::optional<int> device_count) {
  std::string out;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const auto comma = spec.find(',', start);
    const std::string item =
        spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      return Status::InvalidArgument(fmt::format("--gpus \"{}\": empty entry", spec));
    const bool index = item.find_first_not_of("0123456789") == std::string::npos;
    if (index && item.size() > 4) {
      return Status::InvalidArgument(fmt::format("--gpus: there is no GPU {}", item));
    }
    if (index && device_count && std::stoul(item) >= static_cast<unsigned long>(*device_count)) {
      return Status::InvalidArgument(
          fmt::format("--gpus: there is no GPU {} (this machine has {})", item, *device_count));
    }
    if (!index && !(item.starts_with("GPU-") || item.starts_with("MIG-"))) {
      return Status::InvalidArgument(
          fmt::format("--gpus: \"{}\" is neither an index nor a GPU-/MIG- UUID", item));
    }
    out += (out.empty() ? "" : ",") + item;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// "auto" or "auto:N": how many GPUs to choose and lease; nullopt when
// --gpus names GPUs itself.
Result<std::optional<int>> AutoCount(const std::string& spec) {
  if (spec != "auto" && !spec.starts_with("auto:")) return std::optional<int>();
  if (spec == "auto") return std::optional<int>(1);
  const std::string n = spec.substr(5);
  char* end = nullptr;
  const long v = std::strtol(n.c_str(), &end, 10);
  if (n.empty() || end != n.c_str() + n.size() || v < 1 || v > 4096) {
    return Status::InvalidArgument(
        fmt::format("--gpus \"{}\": expected auto:N with N from 1 to 4096", spec));
  }
  return std::optional<int>(static_cast<int>(v));
}

// Why OpenSource failed, on one line and without its advice.
std::string OneLineReason(const Status& why) {
  constexpr std::string_view kAdvice = "\nRun `gpuwatch doctor`";  // added by OpenSource
  const std::string& m = why.message();
  std::string reason;
  for (std::size_t i = 0; i < m.size() && m.compare(i, kAdvice.size(), kAdvice) != 0; ++i) {
    if (m[i] != '\n') {
      reason += m[i];
      continue;
    }
    while (i + 1 < m.size() && m[i + 1] == ' ') ++i;
    reason += ' ';
  }
  if (!reason.empty() && reason.back() != '.') reason += '.';
  return reason;
}

// The one line said when the job runs without GPU monitoring: why, and what
// is lost.
std::string UnmonitoredWarning(const std::string& reason) {
  return fmt::format(
      "gpuwatch run: warning: the job runs without GPU monitoring (no GPU samples, alerts, leak "
      "checks or --memory-limit): {} Run `gpuwatch doctor` for a diagnosis; add --require-gpu to "
      "refuse to start instead.",
      reason);
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
    args.claim.count = **auto_count;
    auto request = BuildClaimRequest(args.claim);
    if (!request) return Usage(request.error().message());
    request->lease = true;
    auto me = host::ProcessLiveness("/proc").Identify(static_cast<std::uint32_t>(getpid()));
    if (!me) return Usage(me.error().message());
    request->holders = {*me};
    request->user = CurrentUser();
    for (const auto& a : args.command)
      request->command += (request->command.empty() ? "" : " ") + a;
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
  std::map<std::string, std::string> env;
  // No exit guard: after forwarding a signal, run waits for its job.
  CatchSignals({SIGINT, SIGTERM, SIGHUP, SIGQUIT}, /*exit_guard=*/false);
  // What the job calls CUDA device k is the k-th GPU of the CUDA_VISIBLE_DEVICES
  // we set (in PCI order, NVML's): framework memory is reported by NVML index.
  std::vector<int> cuda_to_nvml;
  std::optional<HeldLeases> held;
  std::optional<JobLease> job_lease;
  if (claim) {
    auto outcome = ClaimGpus(*source, *claim, "gpuwatch run", std::cerr, args.quiet);
    if (!outcome) {
      std::cerr << "gpuwatch run: " << outcome.error().message() << "\n";
      return ExitStatusFor(outcome.error());
    }
    if (outcome->kind != ClaimOutcome::Kind::kGranted) {
      return ExplainRefusal("gpuwatch run", *claim, *outcome, std::cerr);
    }
    held.emplace(MachineLeaseBook(), outcome->ticket);
    job_lease.emplace();
    for (const auto& c : outcome->choice.chosen) job_lease->devices.push_back(c.id);
    job_lease->ticket = outcome->ticket;
    job_lease->granted = outcome->granted;
    job_lease->waited = std::chrono::duration_cast<std::chrono::milliseconds>(outcome->waited);
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    env["CUDA_VISIBLE_DEVICES"] = DeviceList(outcome->choice, false);
    for (const auto& c : outcome->choice.chosen) cuda_to_nvml.push_back(c.index);
    if (!args.quiet) {
      terminal.Line(fmt::format("leased GPU {} until the job ends (ticket #{})",
                                DeviceList(outcome->choice, false), outcome->ticket));
    }
  } else if (!args.gpus.empty()) {
    auto visible = VisibleDevices(
        args.gpus, source ? std::optional(source->backend->DeviceCount()) : std::nullopt);
    if (!visible) return Usage(visible.error().message());
    // CUDA numbers GPUs fastest-first unless told to use PCI order, which is NVML's.
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    env["CUDA_VISIBLE_DEVICES"] = *visible;
    if (visible->find_first_not_of("0123456789,") == std::string::npos) {
      for (std::size_t at = 0; at < visible->size();) {  // indices only; UUIDs stay unmapped
        const auto comma = visible->find(',', at);
        cuda_to_nvml.push_back(std::stoi(visible->substr(at, comma - at)));
        at = comma == std::string::npos ? visible->size() : comma + 1;
      }
    }
  }
  auto socket = JobSocket::Create();
  if (!socket) {
    std::cerr << "gpuwatch: " << socket.error().message() << "\n";
    return kExitFailure;
  }
  env["GPUWATCH_SOCKET"] = (*socket)->path();
  const std::string demo_scenario = source ? source->demo_scenario : std::string();
  if (!demo_scenario.empty()) terminal.Line("DEMO: simulated GPUs (" + demo_scenario + ")");
  const std::filesystem::path proc_dir = common.host_proc.empty() ? "/proc" : common.host_proc;

  std::optional<Sampler> sampler;  // none: unmonitored
  if (source) {
    SamplerOptions options;
    options.interval = *interval;
    sampler.emplace(std::move(source->backend), std::move(source->resolver), options);
    sampler->Start();
  }
  const auto started = std::chrono::system_clock::now();
  auto child = ChildProcess::Spawn(args.command, env);
  if (!child) {
    if (sampler) sampler->Stop();
    std::cerr << "gpuwatch run: " << child.error().message() << "\n";
    return 127;
  }
  if (held) {
    // The job keeps its GPUs while it lives, even if gpuwatch is killed.
    auto job = host::ProcessLiveness("/proc").Identify(static_cast<std::uint32_t>(child->pid()));
    const Status added = job ? held->AddHolder(*job) : job.error();
    if (!added.ok()) terminal.Line("warning: the lease does not name the job: " + added.message());
  }

  JobSummary summary(args.command, started);
  summary.SetLeakVerdictSpan((*pipeline)->leaks().options().verdict_min_span);
  report::ReportRecorder recorder;
  std::optional<MemoryGuard> guard;
  if (limit) guard.emplace(*limit, *grace);
  // Every event of the job: to the report and the summary, and the notable
  // ones to the terminal (alerts are written by their rules' `log` action).
  auto show_event = [&](const Event& e) {
    recorder.AddEvent(e);
    summary.AddEvent(e);
    const bool notable =
        e.kind == Event::Kind::kDiagnosis || e.kind == Event::Kind::kLeakSuspected ||
        e.kind == Event::Kind::kLeakUpdated || e.kind == Event::Kind::kOomForecast ||
        e.kind == Event::Kind::kOomForecastCleared || e.kind == Event::Kind::kDeviceLost;
    if (notable && !args.quiet) terminal.Line(EventLogLine(e));
  };
  std::uint64_t last = 0;
  std::optional<int> status;
  while (!status) {
    if (const int sig = TakeSignal(); sig != 0) {
      child->Signal(sig);
      if (!args.quiet) terminal.Line(fmt::format("forwarded signal {} to the job", sig));
    }
    std::shared_ptr<const Snapshot> snap;
    if (sampler) {
      snap = sampler->WaitNewer(last, std::chrono::milliseconds(50));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    status = child->Poll();
    std::vector<Event> job_events;
    for (auto& m : (*socket)->Drain()) {
      const std::optional<std::uint32_t> pid = m.sender_pid ? m.sender_pid : m.message.pid;
      if (m.message.kind == JobMessage::Kind::kMark) {
        summary.AddMark(m.message.mark, m.message.mark_value);
        std::vector<Event> marked = (*pipeline)->Mark(m.time, m.message.mark, m.message.mark_value);
        recorder.AddEvent(marked.front());
        for (std::size_t i = 1; i < marked.size(); ++i) job_events.push_back(marked[i]);
      } else if (m.message.kind == JobMessage::Kind::kMemory) {
        const int cuda = m.message.device;
        const int gpu = cuda >= 0 && static_cast<std::size_t>(cuda) < cuda_to_nvml.size()
                            ? cuda_to_nvml[static_cast<std::size_t>(cuda)]
                            : cuda;
        summary.AddFrameworkMemory(gpu, m.message.framework, m.message.bytes);
        recorder.AddFramework(m.time, gpu, m.message.framework, m.message.bytes);
        for (auto& e :
             (*pipeline)->Framework(m.time, gpu, m.message.framework, m.message.bytes, pid)) {
          job_events.push_back(std::move(e));
        }
      }
    }
    for (const auto& e : job_events) show_event(e);
    for (const auto& error : (*socket)->DrainErrors()) {
      if (!args.quiet) terminal.Line("GPUWATCH_SOCKET: " + error);
    }
    if (!snap) continue;
    last = snap->sequence;
    const auto job =
        host::Descendants(host::ReadParents(proc_dir), static_cast<std::uint32_t>(child->pid()));
    summary.Observe(*snap, job);
    recorder.Observe(*snap, &job);
    for (const auto& e : (*pipeline)->Observe(snap)) show_event(e);
    if (guard) {
      double job_bytes = 0;
      for (const auto& d : snap->devices) {
        for (const auto& p : d.processes) {
          const Reading& m = p.fields[FieldId::kProcessUsedMemoryBytes];
          if (job.count(p.pid) && m.is_number()) job_bytes += m.number();
        }
      }
      const MemoryGuard::Step step = guard->Observe(std::chrono::steady_clock::now(), job_bytes);
      if (step.action != MemoryGuard::Action::kNone) {
        terminal.Line(step.explanation);  // always said: it acts on the job
        Event e;
        e.time = snap->time;
        e.kind = Event::Kind::kAlertFiring;
        e.severity =
            step.action == MemoryGuard::Action::kWarn ? Severity::kWarning : Severity::kCritical;
        e.source = "memory_limit";
        e.value = job_bytes;
        e.message = step.explanation;
        (*pipeline)->Record(e);
        summary.AddEvent(e);
        recorder.AddEvent(e);
        if (step.action == MemoryGuard::Action::kTerminate) child->Signal(SIGTERM);
        if (step.action == MemoryGuard::Action::kKill) child->Signal(SIGKILL);
      }
    }
  }
  held.reset();  // the job is over: its GPUs go to the next in the queue
  if (sampler) sampler->Stop();
  (*pipeline)->Close();
  std::map<int, std::chrono::milliseconds> throttled;
  for (const auto& [gpu, t] : (*pipeline)->diagnoser().throttle_totals()) throttled[gpu] = t.any;
  JobReport job_report = summary.Finish(std::chrono::system_clock::now(), status,
                                        (*pipeline)->diagnoser().starved_totals(), throttled);
  job_report.lease = job_lease;
  job_report.unmonitored = unmonitored;
  if (!unmonitored.empty() && job_report.leaks.empty()) {
    job_report.leak_verdict = "not checked: the GPUs were not monitored";
  }
  if (!args.quiet) std::cerr << RenderJobReport(job_report);
  if (json_file) {
    const std::string text = JobReportToJson(job_report).dump(2) + "\n";
    std::fwrite(text.data(), 1, text.size(), json_file.get());
  }
  if (!args.report.empty()) {
    std::string command;
    for (const auto& a : args.command) command += (command.empty() ? "" : " ") + a;
    report::ReportMeta meta;
    meta.title = "gpuwatch run — " + command.substr(0, 120);
    meta.hostname = args.outputs.hostname;
    meta.source = "run";
    meta.demo = demo_scenario;
    auto page = report::RenderHtml(
        recorder.ToJson(meta, JobReportRows(job_report), JobReportToJson(job_report)));
    const Status written = page ? report::WriteFileAtomically(args.report, *page) : page.error();
    if (!written.ok()) {
      std::cerr << "gpuwatch: --report: " << written.message() << "\n";
    } else if (!args.quiet) {
      std::cerr << "report       " << args.report << "\n";
    }
  }
  return *status;
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
