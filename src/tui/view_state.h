// What the user has chosen: the screen, the host tab, sort, filter, tree,
// tags, selection, chart window, theme. Changed by keys (keys.h), read by
// the view (view.h). Plain data.
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuwatch/process_key.h"

namespace gpuwatch::tui {

enum class Screen { kMain, kHelp, kProcess, kEnvironment };

// Process table columns, in the order `<` and `>` walk them.
enum class Column {
  kPid,
  kUser,
  kGpu,
  kMemory,
  kSm,
  kCpu,
  kHostMemory,
  kTime,
  kWhere,      // container / pod / Slurm job
  kFramework,  // allocated / reserved
  kLease,
  kCommand,
};
inline constexpr int kColumnCount = static_cast<int>(Column::kCommand) + 1;

// Fleet overview columns, in the order `<` and `>` walk them there.
enum class FleetColumn { kHost, kGpu, kName, kFree, kTotal, kUtil, kTemp, kPower, kProcs };
inline constexpr int kFleetColumnCount = static_cast<int>(FleetColumn::kProcs) + 1;

enum class Theme { kDark, kLight, kMono };

// A signal waiting for the user's yes (and root's second yes).
struct PendingSignal {
  int signal = 0;
  std::vector<ProcessKey> targets;
  int confirmations_needed = 1;
};

inline constexpr std::chrono::seconds kChartWindows[] = {
    std::chrono::seconds(60), std::chrono::seconds(300), std::chrono::seconds(900),
    std::chrono::seconds(3600)};
inline constexpr const char* kChartWindowNames[] = {"1 min", "5 min", "15 min", "1 h"};

// "SIGTERM", "SIGKILL", "SIGINT", else "signal N".
std::string SignalName(int signal);

struct ViewState {
  Screen screen = Screen::kMain;
  int tab = 0;  // with several hosts: 0 the fleet overview, then each host
  Column sort = Column::kMemory;
  bool reverse = true;  // largest first
  std::string filter;
  bool editing_filter = false;
  bool tree = false;
  std::set<ProcessKey> tagged;
  std::optional<ProcessKey> selected;           // the process the cursor is on
  int fleet_row = 0;                            // the cursor on the fleet overview
  FleetColumn fleet_sort = FleetColumn::kFree;  // the freest GPU first
  bool fleet_reverse = true;
  int scroll = 0;  // first process row shown
  int help_scroll = 0;
  int chart_window = 0;  // index into kChartWindows
  int chart_gpu = -1;    // the GPU whose charts show (-1: the selected process's)
  bool readonly = false;
  bool unicode = true;
  std::optional<PendingSignal> pending;
  std::string message;  // the status line: what the last key did, or why not
  bool quit = false;
};

}  // namespace gpuwatch::tui
