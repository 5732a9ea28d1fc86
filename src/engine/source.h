// Where the data comes from: the real driver, the fake library with a
// scenario (the demo fleet), or a recording; host attribution options; and
// the one place a backend is opened, for every front end (the CLI, the
// daemon, the job session, the Python Monitor).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuwatch/backend.h"
#include "host/process_resolver.h"

namespace gpuwatch::engine {

struct SourceOptions {
  bool demo = false;
  std::string scenario;       // a fake-NVML scenario instead of the demo fleet
  std::string host_proc;      // a mounted host /proc
  std::string replay;         // a recording (JSON Lines or SQLite) instead of GPUs
  double replay_speed = 1.0;  // 0: as fast as it can be analysed; every sample either way
  // Where an embedder (the Python package) keeps the demo's
  // lib/libnvidia-ml-fake.so and scenarios/, searched first.
  std::string demo_dir;
  // An embedder opens sources one after another in one process, so NVML is
  // shut down with each (commands end with the process).
  bool shutdown_nvml_on_close = false;
  // Answer from a running daemon's latest sample when one reads the same
  // GPUs (the one-shot commands; --no-daemon clears it). Only for this
  // machine's GPUs: not with --demo, --scenario, --replay or --host-proc.
  bool daemon = false;
};

// The directory of the running executable (/proc/self/exe), "." when it
// cannot be read: where gpuwatch finds what it ships beside itself.
std::string ExeDir();

// Where demo assets live (next to the binary when installed, the source tree
// when run from a build directory).
struct DemoAssets {
  std::string library;
  std::string scenario;
  std::string host_proc;  // "" when the scenario has no .host tree
};
Result<DemoAssets> FindDemoAssets(const std::string& scenario_override,
                                  const std::string& demo_dir = "");

struct Source {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<host::ProcessResolver> resolver;
  std::string demo_scenario;  // for the DEMO banner
  std::string replay;         // for the REPLAY banner
  std::string daemon;         // the answer socket the data came from ("" read here)
};

// Where a daemon answers the one-shot commands: daemon.sock in the runtime
// directory (host::LeaseDirectory: GPUWATCH_RUNTIME_DIR, /dev/shm/gpuwatch or
// /tmp/gpuwatch), shared by every user as the leases are.
std::string AnswerSocketPath();
// What selects the GPUs a process reads when it opens the driver: the NVML
// library GPUWATCH_NVML_LIBRARY names ("" the system's) and the fake
// library's scenario. A daemon's answer stands in for a reading only when
// both sides have the same key.
std::string GpuSourceKey();

// The scenario's file name ("demo.yaml"): the DEMO banners' words for it,
// short and the same on every machine (its path is in the JSON and reports).
std::string DemoLabel(const Source& source);

// What every output says when the GPUs are not this machine's now: "DEMO:
// simulated GPUs (FILE), not this machine's hardware", "REPLAY of FILE:
// recorded GPUs, not this machine's now", or "" for real GPUs.
std::string SourceBanner(const Source& source);

// Opens the backend the arguments ask for. On failure the Status says why
// and what to try (doctor, --demo).
Result<Source> OpenSource(const SourceOptions& args);
// OpenSource on a thread of its own, so that a driver that never answers
// its first calls (nvmlInit, device discovery) cannot hold the command:
// waits until it is open, `until` passes or `give_up` says so (polled every
// 100 ms; none: only `until`), then kUnavailable saying why (the
// opening thread is left to the driver), and calls `slow` once, with what is
// in flight, when it takes `slow_after`.
struct OpenWait {
  std::optional<std::chrono::steady_clock::time_point> until;
  std::chrono::milliseconds slow_after{10'000};
  std::function<void(const std::string& what)> slow;
  std::function<bool()> give_up;
};
Result<Source> OpenSourceWaiting(const SourceOptions& args, const OpenWait& wait);
host::ProcOptions ProcOptionsFor(const SourceOptions& args, const std::string& demo_host_proc);

std::string Hostname();
// The machine the data comes from, for the hostname outputs carry: this
// one's (Hostname()), or with --replay the one the recording names ("" when
// it names none, as a SQLite history does not).
std::string SourceHostname(const SourceOptions& args);

}  // namespace gpuwatch::engine
