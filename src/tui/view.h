// The view: the model and the view state in, a Canvas out. Pure (the
// families and process details are read by the caller and passed in). Also
// says where things landed, for the keys and the mouse.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "tui/canvas.h"
#include "tui/model.h"
#include "tui/process_rows.h"
#include "tui/view_state.h"

namespace gpuwatch::tui {

// What the per-process screen shows beyond the snapshot (read from /proc by
// the caller, local processes only).
struct ProcessDetails {
  std::string cgroup;                    // /proc/PID/cgroup, "" when unknown
  std::vector<std::string> environment;  // KEY=value, sorted
  std::string environment_refused;       // why it is not shown
};

struct Layout {
  bool compact = false;
  std::vector<ProcessRow> rows;  // every row of the table, in order (not only those shown)
  int table_y = -1;              // screen row of the first row shown
  int table_rows = 0;            // rows shown
  int header_y = -1;             // the table's header row
  struct Span {
    int x0 = 0, x1 = 0;  // [x0, x1)
    int value = 0;       // a Column, or a tab index
  };
  std::vector<Span> header;  // clickable column titles
  int tabs_y = -1;
  std::vector<Span> tabs;
  int fleet_rows = 0;  // the fleet overview's GPU rows
  int fleet_y = -1;
  int help_lines = 0;
  int page = 1;  // rows a PgDn moves
};

struct RenderInput {
  const TopModel& model;
  ViewState& state;  // selection and scroll are clamped to what exists
  const Families* families = nullptr;
  const ProcessDetails* details = nullptr;
  std::chrono::system_clock::time_point now;
};

// Draws everything into `canvas` (its size is the terminal's).
Layout Render(const RenderInput& in, Canvas& canvas);

// The fields Render draws from a snapshot and its history (the header, the
// GPU blocks, the charts, the process table and the process view). top's own
// sampler reads these and what its analyses judge, nothing else.
FieldMask DrawnFields();

// The smallest terminal anything is drawn in; below it, a one-line notice.
inline constexpr int kMinWidth = 40;
inline constexpr int kMinHeight = 8;

// Every key, for the help screen and docs/top.md.
struct KeyHelp {
  std::string keys;
  std::string what;
};
const std::vector<KeyHelp>& KeyList();

}  // namespace gpuwatch::tui
