#include "engine/sweep_runner.h"

#include <fmt/format.h>

#include <csignal>
#include <fstream>
#include <set>
#include <thread>

#include "analysis/sweep/run_verdict.h"
#include "engine/child_process.h"
#include "host/process_tree.h"
#include "transport/job_socket.h"

namespace gpuwatch::engine {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kTailBytes = 8192;
// A copy that reached its steps is stopped only once this many samples have
// listed it on a GPU (device and process fields may be read a sample apart),
// or after kVisibleWithin (a job that never shows on one).
constexpr int kSamplesOnGpu = 3;
constexpr auto kVisibleWithin = std::chrono::seconds(3);
// The device's memory counts once a copy is listed (before, the previous run
// may still be), or after this long (a job NVML lists no process for).
constexpr auto kDeviceFrom = std::chrono::seconds(1);
constexpr auto kGrace = std::chrono::seconds(5);  // SIGTERM to SIGKILL at the end of a run

std::string Tail(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t from = size > kTailBytes ? size - kTailBytes : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string out(size - from, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

struct Copy {
  std::optional<ChildProcess> child;
  std::unique_ptr<JobSocket> socket;
  std::filesystem::path output;
  sweep::CopyRecord record;
  std::set<std::uint32_t> pids_seen;  // every pid of its tree
  int samples_on_gpu = 0;             // snapshots that listed it
  bool stopped = false;               // by the sweep
  std::optional<std::chrono::system_clock::time_point> first_step, last_step;
};

void Drain(Copy& c) {
  for (const auto& m : c.socket->Drain()) {
    if (m.message.kind == JobMessage::Kind::kMark && m.message.mark == "step") {
      ++c.record.steps;
      if (!c.first_step) c.first_step = m.time;
      c.last_step = m.time;
    } else if (m.message.kind == JobMessage::Kind::kMemory) {
      for (const auto& [key, bytes] : m.message.bytes) {
        std::optional<double>* slot = nullptr;
        if (key == "allocated" || key == "peak_allocated") {
          slot = &c.record.framework_allocated_bytes;
        } else if (key == "reserved" || key == "peak_reserved") {
          slot = &c.record.framework_reserved_bytes;
        } else if (key == "inactive_split" || key == "peak_inactive_split") {
          slot = &c.record.framework_inactive_split_bytes;
        }
        if (slot != nullptr) *slot = std::max(slot->value_or(0), bytes);
      }
    }
  }
}

}  // namespace

bool HasPlaceholder(const std::vector<std::string>& argv) {
  for (const auto& a : argv) {
    if (a.find(kSweepPlaceholder) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> SubstituteValue(const std::vector<std::string>& argv, long value) {
  std::vector<std::string> out = argv;
  const std::string placeholder = kSweepPlaceholder;
  for (auto& a : out) {
    for (auto at = a.find(placeholder); at != std::string::npos; at = a.find(placeholder, at + 1)) {
      a.replace(at, placeholder.size(), std::to_string(value));
    }
  }
  return out;
}

Result<std::unique_ptr<SweepRunner>> SweepRunner::Start(Source source, SweepRunOptions options) {
  SamplerOptions s;
  s.interval = options.interval;
  auto sampler =
      std::make_unique<Sampler>(std::move(source.backend), std::move(source.resolver), s);
  sampler->Start();
  auto first = sampler->WaitNewer(0, std::chrono::seconds(10));
  if (!first) return Status::Unavailable("the GPUs gave no sample within 10 s");
  const DeviceSample* device = nullptr;
  for (const auto& d : first->devices) {
    if (d.index == options.gpu) device = &d;
  }
  if (device == nullptr) {
    return Status::InvalidArgument(fmt::format("there is no GPU {} (this machine has {})",
                                               options.gpu, first->devices.size()));
  }
  std::unique_ptr<SweepRunner> runner(new SweepRunner(std::move(sampler), std::move(options)));
  const Reading& name = device->fields[FieldId::kName];
  runner->gpu_name_ = name.is_text() ? name.text() : "GPU";
  const Reading& total = device->fields[FieldId::kMemoryTotalBytes];
  const Reading& used = device->fields[FieldId::kMemoryUsedBytes];
  if (!total.is_number() || !used.is_number()) {
    return Status::Unavailable(
        fmt::format("GPU {} reports no memory total or use", runner->options_.gpu));
  }
  runner->total_bytes_ = total.number();
  runner->free_bytes_ = total.number() - used.number();
  return runner;
}

SweepRunner::SweepRunner(std::unique_ptr<Sampler> sampler, SweepRunOptions options)
    : options_(std::move(options)), sampler_(std::move(sampler)) {}

SweepRunner::~SweepRunner() { sampler_->Stop(); }

sweep::RunRecord SweepRunner::Run(long value, int copies, const std::function<int()>& stop) {
  sweep::RunRecord run;
  run.value = value;
  run.copies = copies;
  const std::vector<std::string> argv =
      value > 0 ? SubstituteValue(options_.command, value) : options_.command;
  std::vector<Copy> all(static_cast<std::size_t>(copies));
  ++run_number_;
  const auto started = Clock::now();
  for (int k = 0; k < copies; ++k) {
    Copy& c = all[static_cast<std::size_t>(k)];
    auto socket = JobSocket::Create();
    if (!socket) {
      c.record.verdict = sweep::RunVerdict::kFailed;
      c.record.reason = "no job socket: " + socket.error().message();
      continue;
    }
    c.socket = std::move(*socket);
    std::map<std::string, std::string> env = options_.env;
    env["GPUWATCH_SOCKET"] = c.socket->path();
    if (value > 0) env["GPUWATCH_SWEEP_VALUE"] = std::to_string(value);
    c.output = options_.work_dir / fmt::format("run{}-{}.log", run_number_, k + 1);
    SpawnOptions spawn;
    spawn.foreground = false;  // Ctrl-C reaches gpuwatch, which ends the run
    spawn.output_path = c.output.string();
    auto child = ChildProcess::Spawn(argv, env, spawn);
    if (!child) {
      c.record.verdict = sweep::RunVerdict::kFailed;
      c.record.reason = child.error().message();
      continue;
    }
    c.record.pid = static_cast<std::uint32_t>(child->pid());
    c.child.emplace(std::move(*child));
  }
  std::uint64_t last = 0;
  bool ending = false;  // the sweep is stopping the copies
  std::optional<Clock::time_point> term_sent;
  bool any_listed = false;  // a copy of this run has been listed on a GPU
  for (;;) {
    auto snap = sampler_->WaitNewer(last, std::chrono::milliseconds(50));
    bool running = false;
    for (Copy& c : all) {
      if (!c.child) continue;
      if (c.socket) Drain(c);
      if (!c.record.exit_status) c.record.exit_status = c.child->Poll();
      running = running || !c.record.exit_status;
    }
    if (snap) {
      last = snap->sequence;
      const auto parents = host::ReadParents(options_.proc_dir);
      for (Copy& c : all) {
        if (!c.child || c.record.exit_status) continue;
        const auto tree = host::Descendants(parents, c.record.pid);
        c.pids_seen.insert(tree.begin(), tree.end());
        double bytes = 0;
        bool listed = false;
        for (const auto& d : snap->devices) {
          for (const auto& p : d.processes) {
            const Reading& m = p.fields[FieldId::kProcessUsedMemoryBytes];
            if (tree.count(p.pid) && m.is_number()) {
              bytes += m.number();
              listed = true;
            }
          }
        }
        if (listed) ++c.samples_on_gpu;
        any_listed = any_listed || listed;
        c.record.peak_process_bytes = std::max(c.record.peak_process_bytes, bytes);
      }
      for (const auto& d : snap->devices) {
        const Reading& used = d.fields[FieldId::kMemoryUsedBytes];
        if (!any_listed && Clock::now() - started < kDeviceFrom) break;
        if (d.index == options_.gpu && used.is_number()) {
          run.peak_device_bytes = std::max(run.peak_device_bytes, used.number());
        }
      }
    }
    if (!running) break;
    const auto now = Clock::now();
    if (!ending) {
      if (const int sig = stop ? stop() : 0; sig != 0) {
        interrupted_ = sig;
        ending = true;
      }
      bool all_done = options_.steps > 0;
      bool any_failed = false;
      for (const Copy& c : all) {
        if (!c.child) continue;
        if (c.record.exit_status && *c.record.exit_status != 0) any_failed = true;
        if (c.record.exit_status) continue;
        const bool visible = c.samples_on_gpu >= kSamplesOnGpu || now - started >= kVisibleWithin;
        if (c.record.steps < options_.steps || !visible) all_done = false;
      }
      if (all_done || any_failed || now - started >= options_.seconds) ending = true;
      if (ending) {
        for (Copy& c : all) {
          if (c.child && !c.record.exit_status) {
            c.stopped = true;
            c.child->Signal(SIGTERM);
          }
        }
        term_sent = now;
      }
    } else if (term_sent && now - *term_sent >= kGrace) {
      for (Copy& c : all) {
        if (c.child && !c.record.exit_status) c.child->Signal(SIGKILL);
      }
      term_sent.reset();
    }
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  run.verdict = sweep::RunVerdict::kFits;
  for (Copy& c : all) {
    if (c.child) {
      sweep::RunEnd end;
      end.exit_status = c.record.exit_status;
      end.stopped_at_bound = c.stopped;
      end.stderr_tail = Tail(c.output);
      for (const auto pid : c.pids_seen) {
        std::error_code ec;
        if (std::filesystem::exists(fmt::format("gpuwatch-oom-{}.json", pid), ec)) {
          end.oom_report = true;
        }
      }
      const sweep::Classified k = sweep::ClassifyRun(end);
      c.record.verdict = k.verdict;
      c.record.reason = k.reason;
      if (k.verdict == sweep::RunVerdict::kFits && c.stopped) {
        c.record.reason = interrupted_ != 0 ? "interrupted" : "ran to its bound";
      }
      if (k.verdict != sweep::RunVerdict::kFits) c.record.output_tail = end.stderr_tail;
      if (c.record.steps >= 2 && c.first_step && c.last_step > c.first_step) {
        c.record.throughput = static_cast<double>(c.record.steps - 1) /
                              std::chrono::duration<double>(*c.last_step - *c.first_step).count();
      } else if (c.record.steps == 0 && !c.stopped && c.record.exit_status == 0 &&
                 run.seconds > 0) {
        c.record.throughput = 1.0 / run.seconds;  // runs per second
      }
    }
    // The worst copy decides: failed > oom > fits.
    if (c.record.verdict == sweep::RunVerdict::kFailed ||
        (c.record.verdict == sweep::RunVerdict::kOom && run.verdict == sweep::RunVerdict::kFits)) {
      run.verdict = c.record.verdict;
      run.reason = c.record.reason;
    }
  }
  for (const Copy& c : all) run.copy.push_back(c.record);
  if (run.reason.empty() && !all.empty()) run.reason = all.front().record.reason;
  return run;
}

}  // namespace gpuwatch::engine
