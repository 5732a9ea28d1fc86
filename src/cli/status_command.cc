// `gpuwatch` (no subcommand): what every GPU and every process holds now, and
// who holds or waits for GPUs (leases, docs/select.md).
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/claim_options.h"
#include "cli/commands.h"
#include "cli/device_filter.h"
#include "engine/hang_report.h"
#include "engine/signals.h"
#include "export/snapshot_json.h"
#include "export/snapshot_leases.h"
#include "export/status_text.h"
#include "gpuwatch/units.h"
#include "sampler/collect.h"

namespace gpuwatch::cli {
namespace {

struct StatusArgs {
  bool json = false;
  bool compact = false;  // one line per GPU
  bool full = false;     // a block per GPU, also on a short terminal
  std::string loop;      // -l: again every this long until Ctrl-C
  std::string id;
  bool no_processes = false;
};

// The machine's leases; none for a recording (they are about now) or when
// the file cannot be read, which is a warning, not a failure.
host::LeaseTable ReadLeases(const Source& source) {
  if (!source.replay.empty()) return {};
  auto table = MachineLeaseBook().Read();
  if (!table) {
    std::cerr << "gpuwatch: warning: leases not shown: " << table.error().message() << "\n";
    return {};
  }
  return std::move(*table);
}

struct TerminalSize {
  int rows = 0;  // 0: stdout is not a terminal
  int columns = 0;
};

TerminalSize StdoutTerminal() {
  winsize size{};
  if (isatty(STDOUT_FILENO) == 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) return {};
  return {size.ws_row, size.ws_col};
}

// One status of the source's GPUs, printed.
int PrintStatus(const CommonArgs& common, const StatusArgs& args, Source* source) {
  CollectOptions collect;
  // The text reads only what it shows; the JSON has every field.
  collect.fields = args.json ? FieldsWithCadence({Cadence::kStatic, Cadence::kSlow,
                                                  Cadence::kInterval, Cadence::kBuffers})
                             : StatusTextFields();
  collect.fields |= FieldsToSelect(args.id);
  collect.processes = !args.no_processes;
  auto collected = CollectAnswer(common, *source, collect);
  if (!collected) {
    std::cerr << "gpuwatch: " << collected.error().message() << "\n";
    return ExitStatusFor(collected.error());
  }
  Snapshot& snap = *collected;

  auto selected = SelectDevices(args.id, snap);
  if (!selected) {
    std::cerr << "gpuwatch: " << selected.error().message() << "\n";
    return kExitUsage;
  }
  std::vector<DeviceSample> chosen;
  for (std::size_t i : *selected) chosen.push_back(snap.devices[i]);
  snap.devices = std::move(chosen);
  host::LeaseTable leases = ReadLeases(*source);

  if (args.json) {
    nlohmann::json doc = SnapshotToJson(snap, Hostname());
    AddLeases(doc, leases, LeaseKeys::kWhereLeased);
    std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  StatusTextOptions text;
  text.color = UseColor(common);
  text.processes = !args.no_processes;
  text.hostname = Hostname();
  text.demo_source = source->demo_scenario.empty() ? "" : engine::DemoLabel(*source);
  text.replay_source = source->replay;
  text.leases = std::move(leases);
  text.now = std::chrono::system_clock::now();
  const TerminalSize terminal = StdoutTerminal();
  std::string full;
  if (!args.compact) full = RenderStatus(snap, text);
  // Unless told, a status taller than the terminal is drawn one line per GPU.
  const bool compact = args.compact || (!args.full && terminal.rows > 0 &&
                                        std::count(full.begin(), full.end(), '\n') > terminal.rows);
  if (compact) {
    text.width = terminal.columns;
    std::cout << RenderCompactStatus(snap, text);
  } else {
    std::cout << full;
  }
  return kExitOk;
}

int RunStatus(const CommonArgs& common, const StatusArgs& args) {
  std::optional<std::chrono::milliseconds> loop;
  if (!args.loop.empty()) {
    auto every = ParseDuration(args.loop);
    if (!every || *every < std::chrono::milliseconds(100)) {
      std::cerr << "gpuwatch: -l/--loop: "
                << (every ? std::string("the shortest loop is 100ms") : every.error().message())
                << "\n";
      return kExitUsage;
    }
    loop = *every;
  }
  const engine::HangReport hangs;  // a driver that never answers is said, not silent
  auto source = OpenSource(OneShotSource(common));
  if (!source) {
    std::cerr << "gpuwatch: " << source.error().message() << "\n";
    return ExitStatusFor(source.error());
  }
  if (!loop) return PrintStatus(common, args, &*source);
  // Plain text again and again (a pipe, a log, TERM=dumb): `gpuwatch top` is the live view.
  engine::CatchSignals();
  for (;;) {
    if (const int code = PrintStatus(common, args, &*source); code != kExitOk) return code;
    std::cout << std::flush;
    if (source->backend->Finished()) return kExitOk;
    const auto until = std::chrono::steady_clock::now() + *loop;
    while (std::chrono::steady_clock::now() < until) {
      if (engine::PendingSignal() != 0) return kExitOk;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!args.json) std::cout << "\n";
  }
}

}  // namespace

Runner AddStatusCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<StatusArgs>();
  app.add_flag("--json", args->json, "Print the snapshot as JSON (schema: docs/json.md)");
  app.add_option("--id", args->id, "GPUs to show: indices, UUIDs or PCI bus ids, comma-separated");
  app.add_flag("--no-processes", args->no_processes, "Leave out the process tables");
  CLI::Option* compact = app.add_flag(
      "--compact", args->compact,
      "One line per GPU (as gpustat): chosen by itself when the full status is taller than "
      "the terminal");
  app.add_flag("--full", args->full,
               "A block per GPU and its process table, also on a short terminal")
      ->excludes(compact);
  app.add_option("-l,--loop", args->loop,
                 "Print the status again every this long until Ctrl-C (e.g. 1, 5s); for a live "
                 "full-screen view use `gpuwatch top`");
  return [&common, args] { return RunStatus(common, *args); };
}

}  // namespace gpuwatch::cli
