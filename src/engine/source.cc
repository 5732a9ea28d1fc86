#include "engine/source.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "backends/nvml/nvml_backend.h"
#include "backends/replay/daemon_backend.h"
#include "backends/replay/replay_backend.h"
#include "core/driver_calls.h"
#include "core/mutex.h"
#include "core/text_file.h"
#include "core/thread_name.h"
#include "host/leases.h"

namespace gpuwatch::engine {
namespace fs = std::filesystem;

std::string ExeDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

namespace {

std::string FirstExisting(std::initializer_list<fs::path> candidates) {
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::exists(c, ec)) return fs::weakly_canonical(c, ec).string();
  }
  return {};
}

}  // namespace

Result<DemoAssets> FindDemoAssets(const std::string& scenario_override,
                                  const std::string& demo_dir) {
  // Found from where the binary is, never from where it was built: next to
  // it (a build tree, the Python package's _data/) or in its install prefix.
  const fs::path exe(ExeDir());
  const fs::path embedded = demo_dir.empty() ? exe : fs::path(demo_dir);
  const fs::path prefix = exe / "..";
  DemoAssets a;
  a.library = FirstExisting({embedded / "lib" / "libnvidia-ml-fake.so",
                             exe / "lib" / "libnvidia-ml-fake.so",
                             prefix / "lib" / "gpuwatch" / "libnvidia-ml-fake.so"});
  if (a.library.empty()) {
    return Status::NotFound(fmt::format(
        "the demo's fake NVML library (libnvidia-ml-fake.so) is neither in {}/lib nor in "
        "{}/lib/gpuwatch",
        embedded.string(), fs::weakly_canonical(prefix).string()));
  }
  if (!scenario_override.empty()) {
    a.scenario = fs::absolute(scenario_override).string();
  } else {
    a.scenario =
        FirstExisting({embedded / "scenarios" / "demo.yaml", exe / "scenarios" / "demo.yaml",
                       prefix / "share" / "gpuwatch" / "scenarios" / "demo.yaml"});
    if (a.scenario.empty()) {
      return Status::NotFound(fmt::format(
          "the demo fleet (scenarios/demo.yaml) is neither in {} nor in {}/share/gpuwatch",
          embedded.string(), fs::weakly_canonical(prefix).string()));
    }
  }
  fs::path host = fs::path(a.scenario).replace_extension(".host") / "proc";
  std::error_code ec;
  if (fs::is_directory(host, ec)) a.host_proc = host.string();
  return a;
}

host::ProcOptions ProcOptionsFor(const SourceOptions& args, const std::string& demo_host_proc) {
  host::ProcOptions o;
  if (!args.host_proc.empty()) {
    o.proc_dir = args.host_proc;
    o.is_host_proc = true;
  } else if (!demo_host_proc.empty()) {
    o.proc_dir = demo_host_proc;
    o.is_host_proc = true;
  }
  return o;
}

Result<Source> OpenSource(const SourceOptions& args) {
  if (!args.replay.empty()) {
    if (args.demo || !args.scenario.empty()) {
      return Status::InvalidArgument(
          "--replay plays a recording: it does not go with --demo or --scenario");
    }
    auto backend = replay::ReplayBackend::Open({args.replay, args.replay_speed});
    if (!backend) return backend.error();
    // What was skipped (a damaged last line, unknown event kinds), said once by every command.
    for (const auto& note : (*backend)->notes()) std::cerr << "gpuwatch: note: " << note << "\n";
    Source source;
    source.replay = args.replay;
    source.backend = std::move(*backend);  // no resolver: the recording keeps who each process was
    return source;
  }
  if (args.daemon && !args.demo && args.scenario.empty() && args.host_proc.empty()) {
    // A daemon that is missing, another user's, stale or reading other GPUs
    // is not an error: the GPUs are read here instead.
    const std::string socket = AnswerSocketPath();
    if (auto warm = replay::DaemonBackend::Connect({socket, GpuSourceKey()})) {
      Source source;
      source.daemon = socket;
      source.backend = std::move(*warm);  // no resolver: the daemon said who each process is
      return source;
    }
  }
  nvml::NvmlOptions options;
  options.shutdown_on_close = args.shutdown_nvml_on_close;
  std::string demo_host_proc;
  Source source;
  if (args.demo || !args.scenario.empty()) {
    if (!args.scenario.empty()) {
      // The fake library reads it inside nvmlInit: a FIFO would block there.
      if (Status s = CheckTextFile(args.scenario); !s.ok()) {
        return Status::InvalidArgument(s.message()).WithContext("--scenario");
      }
    }
    auto assets = FindDemoAssets(args.scenario, args.demo_dir);
    if (!assets) return assets.error();
    // The fake library reads its scenario from the environment at nvmlInit;
    // set before any thread starts.
    setenv("GPUWATCH_FAKE_SCENARIO", assets->scenario.c_str(), 1);
    options.library_path = assets->library;
    options.demo = true;
    demo_host_proc = assets->host_proc;
    source.demo_scenario = assets->scenario;
  } else if (const char* lib = std::getenv("GPUWATCH_NVML_LIBRARY");
             lib != nullptr && *lib != '\0') {
    options.library_path = lib;
  }
  auto backend = nvml::NvmlBackend::Open(options);
  if (!backend) {
    if (options.demo) return backend.error();
    return Status::Unavailable(fmt::format(
        "{}\nRun `gpuwatch doctor` for a full diagnosis, or add --demo to see the simulated "
        "demo fleet.",
        backend.error().message()));
  }
  source.backend = std::move(*backend);
  source.resolver = std::make_unique<host::ProcessResolver>(ProcOptionsFor(args, demo_host_proc));
  return source;
}

std::string AnswerSocketPath() {
  return (host::LeaseDirectory(std::getenv("GPUWATCH_RUNTIME_DIR")) / "daemon.sock").string();
}

std::string GpuSourceKey() {
  const auto value = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr ? v : "");
  };
  const std::string library = value("GPUWATCH_NVML_LIBRARY");
  if (library.empty()) return "nvml";
  return fmt::format("nvml:{} scenario:{}", library, value("GPUWATCH_FAKE_SCENARIO"));
}

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

std::string SourceHostname(const SourceOptions& args) {
  return args.replay.empty() ? Hostname() : replay::RecordedHostname(args.replay);
}

Result<Source> OpenSourceWaiting(const SourceOptions& args, const OpenWait& wait) {
  struct Opening {
    Mutex mu;
    CondVar cv;
    std::optional<Result<Source>> result GUARDED_BY(mu);
  };
  auto opening = std::make_shared<Opening>();
  // Detached: if the driver never answers, the thread stays with it.
  std::thread([opening, copy = SourceOptions(args)] {
    NameThisThread("gw-open");
    Result<Source> r = OpenSource(copy);
    MutexLock lock(opening->mu);
    opening->result.emplace(std::move(r));
    opening->cv.NotifyAll();
  }).detach();
  const auto started = std::chrono::steady_clock::now();
  bool reported = false;
  MutexLock lock(opening->mu);
  while (!opening->result) {
    opening->cv.WaitFor(lock, std::chrono::milliseconds(100));
    if (opening->result) break;
    const auto now = std::chrono::steady_clock::now();
    const auto what =
        DescribeHungCall(std::chrono::milliseconds(0))
            .value_or("opening the GPUs has not finished for " +
                      std::to_string(
                          std::chrono::duration_cast<std::chrono::seconds>(now - started).count()) +
                      " s");
    if (wait.give_up && wait.give_up()) {
      return Status::Unavailable("interrupted while waiting for the driver: " + what);
    }
    if (wait.until && now >= *wait.until) {
      return Status::Unavailable("the driver did not answer in time: " + what);
    }
    if (!reported && now - started >= wait.slow_after && wait.slow) {
      reported = true;
      lock.Unlock();
      wait.slow(what);
      lock.Lock();
    }
  }
  return std::move(*opening->result);
}

std::string DemoLabel(const Source& source) {
  return std::filesystem::path(source.demo_scenario).filename().string();
}

std::string SourceBanner(const Source& source) {
  if (!source.replay.empty()) {
    return "REPLAY of " + source.replay + ": recorded GPUs, not this machine's now";
  }
  if (!source.demo_scenario.empty()) {
    return "DEMO: simulated GPUs (" + DemoLabel(source) + "), not this machine's hardware";
  }
  return "";
}

}  // namespace gpuwatch::engine
