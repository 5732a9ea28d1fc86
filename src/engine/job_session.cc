#include "engine/job_session.h"

#include <unistd.h>

#include <csignal>
#include <thread>

#include "analysis/job/memory_guard.h"
#include "engine/child_process.h"
#include "engine/job_feed.h"
#include "host/process_tree.h"
#include "sampler/sampler.h"
#include "transport/job_socket.h"

namespace gpuwatch::engine {
namespace {

void Call(const std::function<void(const std::string&)>& f, const std::string& line) {
  if (f) f(line);
}

// The job's bytes on every GPU.
double JobBytes(const Snapshot& snap, const std::set<std::uint32_t>& job) {
  double bytes = 0;
  for (const auto& d : snap.devices) {
    for (const auto& p : d.processes) {
      const Reading& m = p.fields[FieldId::kProcessUsedMemoryBytes];
      if (job.count(p.pid) && m.is_number()) bytes += m.number();
    }
  }
  return bytes;
}

}  // namespace

bool NotableJobEvent(const Event& e) {
  return e.kind == Event::Kind::kDiagnosis || e.kind == Event::Kind::kLeakSuspected ||
         e.kind == Event::Kind::kLeakUpdated || e.kind == Event::Kind::kOomForecast ||
         e.kind == Event::Kind::kOomForecastCleared || e.kind == Event::Kind::kDeviceLost;
}

Result<JobOutcome> RunJob(const JobOptions& options, std::optional<Source> source,
                          Pipeline& pipeline, std::optional<HeldLeases>& held,
                          const JobHooks& hooks) {
  auto socket = JobSocket::Create();
  if (!socket) return socket.error();
  std::map<std::string, std::string> env = options.env;
  env["GPUWATCH_SOCKET"] = (*socket)->path();

  std::optional<Sampler> sampler;  // none: unmonitored
  if (source) {
    SamplerOptions s;
    s.interval = options.interval;
    sampler.emplace(std::move(source->backend), std::move(source->resolver), s);
    sampler->Start();
  }
  JobOutcome out;
  const auto started = std::chrono::system_clock::now();
  auto child = ChildProcess::Spawn(options.command, env);
  if (!child) {
    if (sampler) sampler->Stop();
    out.spawn_error = child.error();
    return out;
  }
  if (held) {
    // The job keeps its GPUs while it lives, even if gpuwatch is killed.
    auto job = host::ProcessLiveness("/proc").Identify(static_cast<std::uint32_t>(child->pid()));
    const Status added = job ? held->AddHolder(*job) : job.error();
    if (!added.ok()) {
      Call(hooks.warning, "warning: the lease does not name the job: " + added.message());
    }
  }

  JobSummary summary(options.command, started);
  summary.SetLeakVerdictSpan(pipeline.leaks().options().verdict_min_span);
  std::optional<MemoryGuard> guard;
  if (sampler && options.memory_limit) {
    guard.emplace(*options.memory_limit, options.grace);
  }
  // Every event of the job: to the report and the summary, and to the front end.
  auto record = [&](const Event& e) {
    out.recorder.AddEvent(e);
    summary.AddEvent(e);
    if (hooks.event) hooks.event(e);
  };
  JobFeedHooks feed;
  feed.gpu = [&](int cuda) {
    return cuda >= 0 && static_cast<std::size_t>(cuda) < options.cuda_to_nvml.size()
               ? options.cuda_to_nvml[static_cast<std::size_t>(cuda)]
               : cuda;
  };
  feed.memory = [&](const FrameworkReading& r) {
    summary.AddFrameworkMemory(r.gpu, r.framework, r.bytes, r.pid);
    out.recorder.AddFramework(r.time, r.gpu, r.framework, r.bytes);
  };
  feed.mark = [&](const std::string& kind, const std::string& value) {
    summary.AddMark(kind, value);
  };
  std::uint64_t last = 0;
  std::shared_ptr<const Snapshot> latest;  // whose UUIDs place framework reports
  while (!out.exit_status) {
    if (const int sig = hooks.take_signal ? hooks.take_signal() : 0; sig != 0) {
      child->Signal(sig);
      Call(hooks.notice, "forwarded signal " + std::to_string(sig) + " to the job");
    }
    std::shared_ptr<const Snapshot> snap;
    if (sampler) {
      snap = sampler->WaitNewer(last, std::chrono::milliseconds(50));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    out.exit_status = child->Poll();
    if (snap) latest = snap;
    const JobFeed jobs = DrainJobs(**socket, pipeline, feed, latest.get());
    for (const auto& e : jobs.events) {
      if (e.kind == Event::Kind::kMark) {
        out.recorder.AddEvent(e);  // the summary counts marks itself
      } else {
        record(e);
      }
    }
    for (const auto& error : jobs.errors) Call(hooks.notice, "GPUWATCH_SOCKET: " + error);
    if (!snap) continue;
    last = snap->sequence;
    const auto job = host::Descendants(host::ReadParents(options.proc_dir),
                                       static_cast<std::uint32_t>(child->pid()));
    summary.Observe(*snap, job);
    out.recorder.Observe(*snap, &job);
    for (const auto& e : pipeline.Observe(snap)) record(e);
    if (!guard) continue;
    const double job_bytes = JobBytes(*snap, job);
    const MemoryGuard::Step step = guard->Observe(std::chrono::steady_clock::now(), job_bytes);
    if (step.action == MemoryGuard::Action::kNone) continue;
    Call(hooks.warning, step.explanation);  // always said: it acts on the job
    Event e;
    e.time = snap->time;
    e.kind = Event::Kind::kAlertFiring;
    e.severity =
        step.action == MemoryGuard::Action::kWarn ? Severity::kWarning : Severity::kCritical;
    e.source = "memory_limit";
    e.value = job_bytes;
    e.message = step.explanation;
    pipeline.Record(e);
    summary.AddEvent(e);
    out.recorder.AddEvent(e);
    if (step.action == MemoryGuard::Action::kTerminate) child->Signal(SIGTERM);
    if (step.action == MemoryGuard::Action::kKill) child->Signal(SIGKILL);
  }
  held.reset();  // the job is over: its GPUs go to the next in the queue
  if (sampler) sampler->Stop();
  pipeline.Close();
  std::map<int, std::chrono::milliseconds> throttled;
  for (const auto& [gpu, t] : pipeline.diagnoser().throttle_totals()) throttled[gpu] = t.any;
  out.report = summary.Finish(std::chrono::system_clock::now(), out.exit_status,
                              pipeline.diagnoser().starved_totals(), throttled);
  out.report.environment = env;
  return out;
}

}  // namespace gpuwatch::engine
