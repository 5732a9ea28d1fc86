// The process table's rows for one host, as the view state asks: every GPU
// process (one row per GPU it is on) joined with what else is known of it
// (framework memory, lease, leak verdict, pre-allocation), narrowed by the
// filter, sorted by the chosen column, optionally as a tree of families.
// Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tui/model.h"
#include "tui/view_state.h"

namespace gpuwatch::tui {

struct ProcessRow {
  ProcessKey key;
  int gpu = 0;
  std::optional<int> mig;  // the MIG device it runs in
  bool is_process = true;  // false: a family head (tree view) that holds no GPU itself
  const ProcessSample* sample = nullptr;  // into the host's snapshot; null for a family head
  std::string user;
  std::string command;
  std::string where;  // "docker:e8e4c437cd61", "pod:1a2b…", "slurm:4242", ""
  std::string lease;  // the lease holder's user when the process's GPU is leased
  std::optional<double> framework_allocated;
  std::optional<double> framework_reserved;
  std::string framework;  // torch, jax, ...
  bool leaking = false;   // a leak verdict or OOM forecast names it
  bool preallocated = false;
  int depth = 0;       // tree view: GPU-process ancestors above it
  std::string branch;  // tree view: the drawing before the command ("├─ ")
  std::optional<double> memory, sm, cpu, rss;
  std::optional<std::chrono::system_clock::duration> elapsed;
};

// pid -> parent pid, and a name for a family head that is no GPU process.
struct Families {
  std::map<std::uint32_t, std::uint32_t> parents;
  std::function<std::string(std::uint32_t)> name_of;
};

// Every row of `host`, filtered and sorted as `state` says (tree when
// state.tree and `families` is given). `now` is what elapsed counts to.
std::vector<ProcessRow> BuildRows(const HostView& host, const ViewState& state,
                                  const Families* families,
                                  std::chrono::system_clock::time_point now);

// Whether `row` matches the filter text: every word (case-insensitive) is in
// its user, command, container / pod / job, or is "gpu<N>" / "<N>" for its GPU.
bool Matches(const ProcessRow& row, std::string_view filter);

std::string_view ColumnTitle(Column c);

}  // namespace gpuwatch::tui
