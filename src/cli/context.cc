#include "cli/context.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "engine/signals.h"

namespace gpuwatch::cli {

void AddCommonOptions(CLI::App& app, CommonArgs& args) {
  app.add_flag("--demo", args.demo,
               "Show the simulated demo fleet (fake NVML) instead of this machine's GPUs");
  app.add_option("--scenario", args.scenario,
                 "With --demo: a fake-NVML scenario file instead of the demo fleet")
      ->check(CLI::ExistingFile);
  app.add_option("--host-proc", args.host_proc,
                 "Read process details from this host /proc (e.g. /host/proc in a container)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--replay", args.replay,
                 "Play a recording (--jsonl FILE or --db FILE) instead of reading the GPUs; "
                 "every recorded sample is analysed once, in order")
      ->check(CLI::ExistingFile);
  app.add_option(
         "--replay-speed", args.replay_speed,
         "With --replay: 1 plays at the recorded pace, 10 ten times faster, 0 as fast as possible")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-daemon", args.no_daemon,
               "gpuwatch, query and select: read the GPUs here, not a running daemon's latest "
               "sample (docs/serve.md)");
  app.add_option("--color", args.color, "Colour: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

Result<Source> OpenSourceWaiting(const CommonArgs& args, OpenWait wait) {
  if (!wait.give_up) wait.give_up = [] { return engine::PendingSignal() != 0; };
  return engine::OpenSourceWaiting(args, wait);
}

engine::SourceOptions OneShotSource(const CommonArgs& args) {
  engine::SourceOptions o = args;
  o.daemon = !args.no_daemon;
  return o;
}

Result<Snapshot> CollectAnswer(const CommonArgs& args, Source& source,
                               const CollectOptions& collect) {
  Snapshot snap = CollectOnce(*source.backend, source.resolver.get(), collect);
  if (source.daemon.empty()) return snap;
  const FieldRange r = RangeOf(Scope::kDevice);
  bool whole = true;
  for (const DeviceSample& d : snap.devices) {
    for (std::size_t i = r.first; i < r.first + r.count && whole; ++i) {
      const Reading& v = d.fields[static_cast<FieldId>(i)];
      whole = !collect.fields.test(i) || v.ok() || v.missing() != Missing::kNotYetSampled;
    }
  }
  if (whole) return snap;
  auto here = OpenSource(static_cast<const engine::SourceOptions&>(args));
  if (!here) return here.error();
  source = std::move(*here);
  return CollectOnce(*source.backend, source.resolver.get(), collect);
}

int UsageError(std::string_view command, std::string_view message) {
  std::cerr << "gpuwatch " << command << ": " << message << "\n";
  return kExitUsage;
}

bool UseColor(const CommonArgs& args, int fd) {
  if (args.color == "always") return true;
  if (args.color == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(fd) != 0 && (no_color == nullptr || *no_color == '\0') &&
         !(term != nullptr && std::string_view(term) == "dumb");
}

}  // namespace gpuwatch::cli
