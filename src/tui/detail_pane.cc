// The screens beside the main one: a process's own view, the help screen
// (every key), and the fleet overview (every GPU of every host).
#include <fmt/format.h>

#include <algorithm>

#include "export/status_text.h"
#include "tui/panes.h"

namespace gpuwatch::tui {

const std::vector<KeyHelp>& KeyList() {
  static const std::vector<KeyHelp> keys = {
      {"q, Ctrl-C", "quit"},
      {"h, ?", "this help (Esc or q leaves it)"},
      {"Up/Down, j/k", "select a process (on the fleet tab: a GPU)"},
      {"PgUp/PgDn, Ctrl-B/Ctrl-F", "a page up / down"},
      {"Home/End, g/G", "first / last process"},
      {"Tab, Shift-Tab", "next / previous host tab (several hosts: the fleet first)"},
      {"Enter", "the selected process: its history, framework memory, leak verdict, cgroup"},
      {"e", "(process view) its environment: your own processes only"},
      {"Esc, Backspace", "back to the main screen; clear the filter"},
      {"Space", "tag / untag the selected process (signals go to the tagged ones)"},
      {"a, u", "tag every process shown / untag all"},
      {"<, >", "sort the table (or the fleet overview) by the previous / next column"},
      {"r", "reverse the sort"},
      {"click a column title", "sort by it (again: reverse)"},
      {"/", "filter by user, command, container, pod, job or GPU (\"gpu3\"); narrows as you type"},
      {"t", "tree view: processes under their parents and launchers"},
      {"0-9", "the GPU whose charts are shown"},
      {"w", "chart window: 1 min, 5 min, 15 min, 1 h"},
      {"T, K, I", "send SIGTERM, SIGKILL, SIGINT to the tagged (or selected) processes, confirmed"},
      {"y / n", "confirm / cancel a signal"},
      {"p", "replay: pause / play the recording"},
      {"[, ]", "replay: seek 1 min back / forward (Shift: { } 10 min)"},
      {"+, -", "replay: faster / slower"},
      {"mouse", "click a row to select it, a tab to show it; wheel scrolls"},
  };
  return keys;
}

void DrawHelp(const RenderInput& in, Canvas& c, Layout& layout) {
  const auto& keys = KeyList();
  const bool u = in.state.unicode;
  c.Put(0, 0, std::string(static_cast<std::size_t>(c.width()), ' '), Style::kHeader);
  c.Put(1, 0, "gpuwatch top: keys", Style::kHeader);
  std::vector<std::string> lines;
  for (const KeyHelp& k : keys) lines.push_back(fmt::format("{:<26} {}", k.keys, k.what));
  lines.emplace_back("");
  lines.emplace_back("Colours: green within limits, yellow near one (memory > 75 %, 70 °C,");
  lines.emplace_back(
      "power cap), red at one (memory > 90 %, 80 °C, thermal slowdown, lost, down).");
  if (in.state.readonly) lines.emplace_back("--readonly: the signal keys are off.");
  layout.help_lines = static_cast<int>(lines.size());
  const int body = c.height() - 2;
  in.state.help_scroll =
      std::clamp(in.state.help_scroll, 0, std::max(0, static_cast<int>(lines.size()) - body));
  for (int i = 0; i < body && in.state.help_scroll + i < static_cast<int>(lines.size()); ++i) {
    c.Put(1, 1 + i,
          Fit(lines[static_cast<std::size_t>(in.state.help_scroll + i)], c.width() - 2, u));
  }
}

void DrawProcess(const HostView& host, const RenderInput& in, Canvas& c, Layout& layout) {
  const bool u = in.state.unicode;
  const ViewState& st = in.state;
  const ProcessRow* row = nullptr;
  for (const ProcessRow& r : layout.rows) {
    if (st.selected && r.key == *st.selected && r.is_process) {
      row = &r;
      break;
    }
  }
  c.Put(0, 0, std::string(static_cast<std::size_t>(c.width()), ' '), Style::kHeader);
  if (row == nullptr) {
    c.Put(1, 0, "process: gone", Style::kHeader);
    c.Put(1, 2, "The process has ended or left the GPUs. Esc goes back.", Style::kDim);
    return;
  }
  c.Put(1, 0,
        Fit(fmt::format("pid {}  {}  GPU {}  user {}  running {}", row->key.pid,
                        row->sample->host.name, row->gpu, row->user.empty() ? "?" : row->user,
                        Elapsed(row->elapsed, u)),
            c.width() - 2, u),
        Style::kHeader);
  std::vector<std::pair<std::string, std::string>> facts;
  facts.emplace_back("command", row->command);
  const HostProcess& h = row->sample->host;
  std::string identity;
  if (!h.container_id.empty())
    identity += h.container_runtime + " container " + h.container_id + "  ";
  if (!h.pod.empty()) {
    identity += "pod " + h.pod_namespace + "/" + h.pod + " container " + h.container_name + "  ";
  }
  if (!h.pod_uid.empty()) identity += "pod uid " + h.pod_uid + "  ";
  if (!h.slurm_job_id.empty()) identity += "Slurm job " + h.slurm_job_id + "  ";
  facts.emplace_back("where",
                     identity.empty() ? "on the host (no container, pod or job)" : identity);
  if (in.details != nullptr && !in.details->cgroup.empty())
    facts.emplace_back("cgroup", in.details->cgroup);
  facts.emplace_back(
      "memory", fmt::format("GPU {}  SM {}  CPU {}  host {}", ShortBytes(row->memory, u),
                            Percent(row->sm, u), Percent(row->cpu, u), ShortBytes(row->rss, u)));
  if (row->framework_allocated || row->framework_reserved) {
    std::string fw = fmt::format("{} allocated {}  reserved {}", row->framework,
                                 ShortBytes(row->framework_allocated, u),
                                 ShortBytes(row->framework_reserved, u));
    if (row->memory && row->framework_reserved) {
      fw += fmt::format("  (NVML - reserved: {} of CUDA context and libraries)",
                        ShortBytes(*row->memory - *row->framework_reserved, u));
    }
    facts.emplace_back("framework", fw);
  } else {
    facts.emplace_back("framework",
                       "none reported (gpuwatch run, or the Python adapters, send it)");
  }
  std::string verdict = "no leak suspected";
  Style verdict_style = Style::kOk;
  for (const leaks::LeakReport& l : host.state.leaks) {
    if (!l.subject.process || l.subject.process->pid != row->key.pid || l.subject.gpu != row->gpu) {
      continue;
    }
    if (!l.estimate.suspected && !l.estimate.forecast) continue;
    verdict =
        fmt::format("{} {:.1f} MiB/min",
                    l.estimate.suspected ? "LEAK" : "OOM forecast:", l.estimate.rate_mib_per_min());
    if (l.time_to_full) verdict += ", GPU full in ~" + HumanDuration(*l.time_to_full);
    if (l.bytes_per_step)
      verdict += fmt::format(" ({:.1f} MiB per step)", *l.bytes_per_step / (1024.0 * 1024));
    verdict_style = Style::kBad;
  }
  if (row->preallocated) {
    verdict += "; pre-allocated its GPU (JAX/TensorFlow): NVML's figure is not what it uses";
  }
  facts.emplace_back("leak", verdict);
  int y = 2;
  for (const auto& [k, v] : facts) {
    if (y >= c.height() - 1) break;
    c.Put(1, y, fmt::format("{:<10}", k), Style::kDim);
    c.Put(12, y, Fit(v, c.width() - 13, u), k == "leak" ? verdict_style : Style::kNormal);
    ++y;
  }
  ++y;
  const ProcessHistory* ph = host.history.process(row->key);
  const double end_s = host.state.snapshot ? SecondsOf(host.state.snapshot->time) : 0;
  const double window_s = static_cast<double>(kChartWindows[st.chart_window].count());
  const int chart_h = std::clamp((c.height() - y - 3) / 2 - 1, 1, 6);
  if (ph != nullptr && y + 2 * (chart_h + 1) <= c.height() - 1) {
    double top = 0;
    for (const auto& p : ph->memory_bytes.points) top = std::max(top, p.second);
    if (const Snapshot* s = host.state.snapshot.get()) {
      for (const DeviceSample& d : s->devices) {
        if (d.index == row->gpu) top = NumberOf(d.fields[FieldId::kMemoryTotalBytes]).value_or(top);
      }
    }
    c.Put(1, y,
          fmt::format("GPU memory {} (last {})", ShortBytes(ph->memory_bytes.last(), u),
                      kChartWindowNames[st.chart_window]),
          Style::kDim);
    Chart(c, 1, y + 1, c.width() - 2, chart_h, ph->memory_bytes, end_s, window_s, top, u);
    y += chart_h + 1;
    c.Put(1, y, fmt::format("SM {}", Percent(ph->sm_ratio.last(), u)), Style::kDim);
    Chart(c, 1, y + 1, c.width() - 2, chart_h, ph->sm_ratio, end_s, window_s, 1, u);
  }
}

void DrawEnvironment(const RenderInput& in, Canvas& c) {
  const bool u = in.state.unicode;
  c.Put(0, 0, std::string(static_cast<std::size_t>(c.width()), ' '), Style::kHeader);
  c.Put(1, 0,
        in.state.selected ? fmt::format("environment of pid {}", in.state.selected->pid)
                          : std::string("environment"),
        Style::kHeader);
  if (in.details == nullptr || !in.details->environment_refused.empty()) {
    c.Put(1, 2, in.details ? in.details->environment_refused : "not known", Style::kWarn);
    return;
  }
  const auto& env = in.details->environment;
  const int body = c.height() - 2;
  in.state.help_scroll =
      std::clamp(in.state.help_scroll, 0, std::max(0, static_cast<int>(env.size()) - body));
  for (int i = 0; i < body && in.state.help_scroll + i < static_cast<int>(env.size()); ++i) {
    c.Put(1, 1 + i, Fit(env[static_cast<std::size_t>(in.state.help_scroll + i)], c.width() - 2, u));
  }
}

namespace {

struct FleetGpu {
  const HostView* host;
  const DeviceSample* device;
  double free = -1;  // -1: not known (host down, GPU stale or lost)
};

// The value a fleet column sorts by; nullopt for text columns and unknowns.
std::optional<double> FleetNumber(const FleetGpu& g, FleetColumn c) {
  const auto& f = g.device->fields;
  switch (c) {
    case FleetColumn::kGpu:
      return g.device->index;
    case FleetColumn::kFree:
      return g.free >= 0 ? std::optional<double>(g.free) : std::nullopt;
    case FleetColumn::kTotal:
      return NumberOf(f[FieldId::kMemoryTotalBytes]);
    case FleetColumn::kUtil:
      return NumberOf(f[FieldId::kUtilizationGpuRatio]);
    case FleetColumn::kTemp:
      return NumberOf(f[FieldId::kTemperatureGpuCelsius]);
    case FleetColumn::kPower:
      return NumberOf(f[FieldId::kPowerDrawWatts]);
    case FleetColumn::kProcs:
      return static_cast<double>(g.device->processes.size());
    case FleetColumn::kHost:
    case FleetColumn::kName:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string FleetName(const FleetGpu& g) {
  const auto& name = g.device->fields[FieldId::kName];
  std::string s = name.is_text() ? name.text() : "GPU";
  if (s.rfind("NVIDIA ", 0) == 0) s.erase(0, 7);
  return s;
}

// Sorted by the user's column (unknown values last either way); ties in
// host order, then by utilization for the free column (the idlest first).
void SortFleet(std::vector<FleetGpu>& gpus, FleetColumn c, bool reverse) {
  std::stable_sort(gpus.begin(), gpus.end(), [&](const FleetGpu& a, const FleetGpu& b) {
    if (c == FleetColumn::kHost || c == FleetColumn::kName) {
      const std::string& ka = c == FleetColumn::kHost ? a.host->state.label : FleetName(a);
      const std::string& kb = c == FleetColumn::kHost ? b.host->state.label : FleetName(b);
      if (ka == kb) return false;
      return reverse ? ka > kb : ka < kb;
    }
    const auto va = FleetNumber(a, c), vb = FleetNumber(b, c);
    if (va.has_value() != vb.has_value()) return va.has_value();
    if (va && *va != *vb) return reverse ? *va > *vb : *va < *vb;
    if (c != FleetColumn::kFree) return false;
    const auto ua = FleetNumber(a, FleetColumn::kUtil).value_or(1);
    const auto ub = FleetNumber(b, FleetColumn::kUtil).value_or(1);
    return ua < ub;
  });
}

struct FleetTitle {
  const char* title;
  int width;
  bool left;  // left-aligned
};
constexpr FleetTitle kFleetTitles[kFleetColumnCount] = {
    {"HOST", 16, true}, {"GPU", 4, false},   {"NAME", 12, true},
    {"FREE", 7, false}, {"TOTAL", 7, false}, {"UTIL", 5, false},
    {"TEMP", 5, false}, {"POWER", 6, false}, {"PROCS", 6, false}};

std::string FleetCell(const std::string& text, const FleetTitle& t, bool u) {
  const std::string fit = Fit(text, t.width, u);
  return t.left ? fmt::format("{:<{}}", fit, t.width) : fmt::format("{:>{}}", fit, t.width);
}

}  // namespace

void DrawFleet(const RenderInput& in, Canvas& c, int y, int height, Layout& layout) {
  const bool u = in.state.unicode;
  std::vector<FleetGpu> gpus;
  for (const HostView& h : in.model.hosts) {
    if (!h.state.snapshot) continue;
    for (const DeviceSample& d : h.state.snapshot->devices) {
      FleetGpu g{&h, &d};
      const auto total = NumberOf(d.fields[FieldId::kMemoryTotalBytes]);
      const auto used = NumberOf(d.fields[FieldId::kMemoryUsedBytes]);
      if (total && used && h.state.down.empty() && d.health == DeviceHealth::kOk) {
        g.free = *total - *used;
      }
      gpus.push_back(g);
    }
  }
  // Which GPU is free across the fleet, whatever the order shown.
  const DeviceSample* freest = nullptr;
  {
    std::vector<FleetGpu> by_free = gpus;
    SortFleet(by_free, FleetColumn::kFree, true);
    if (!by_free.empty() && by_free.front().free > 0) freest = by_free.front().device;
  }
  SortFleet(gpus, in.state.fleet_sort, in.state.fleet_reverse);

  // The header: each title clickable; the sort column marked.
  c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), Style::kHeader);
  layout.header_y = y;
  layout.header.clear();
  int x = 0;
  for (int i = 0; i < kFleetColumnCount; ++i) {
    std::string title = kFleetTitles[i].title;
    if (static_cast<int>(in.state.fleet_sort) == i) {
      title += in.state.fleet_reverse ? (u ? "▼" : "v") : (u ? "▲" : "^");
    }
    const int x1 = x + c.Put(x, y, FleetCell(title, kFleetTitles[i], u), Style::kHeader);
    layout.header.push_back({x, x1, i});
    x = x1 + 1;
  }
  c.Put(x + 1, y, "STATE", Style::kHeader);

  layout.fleet_y = y + 1;
  layout.fleet_rows = static_cast<int>(gpus.size());
  in.state.fleet_row = std::clamp(in.state.fleet_row, 0, std::max(0, layout.fleet_rows - 1));
  int row = 0;
  const int body = height - 1;
  const int first = std::max(0, in.state.fleet_row - body + 1);
  for (int i = first; i < static_cast<int>(gpus.size()) && row < body; ++i, ++row) {
    const FleetGpu& g = gpus[static_cast<std::size_t>(i)];
    const auto& f = g.device->fields;
    std::string state = "ok";
    Style style = Style::kOk;
    if (!g.host->state.down.empty()) {
      state = "down: " + g.host->state.down;
      style = Style::kBad;
    } else if (g.device->health != DeviceHealth::kOk) {
      state = g.device->health == DeviceHealth::kStale ? "stale" : "lost";
      style = Style::kBad;
    } else if (g.device == freest) {
      state = u ? "← freest" : "<- freest";
    }
    const auto temp = NumberOf(f[FieldId::kTemperatureGpuCelsius]);
    const auto power = NumberOf(f[FieldId::kPowerDrawWatts]);
    const std::string cells[kFleetColumnCount] = {
        g.host->state.label,
        std::to_string(g.device->index),
        FleetName(g),
        g.free >= 0 ? ShortBytes(g.free, u) : (u ? "—" : "-"),
        ShortBytes(NumberOf(f[FieldId::kMemoryTotalBytes]), u),
        Percent(NumberOf(f[FieldId::kUtilizationGpuRatio]), u),
        temp ? fmt::format("{:.0f}C", *temp) : "-",
        power ? fmt::format("{:.0f}W", *power) : "-",
        std::to_string(g.device->processes.size())};
    int cx = 0;
    for (int k = 0; k < kFleetColumnCount; ++k) {
      cx += c.Put(cx, y + 1 + row, FleetCell(cells[k], kFleetTitles[k], u)) + 1;
    }
    c.Put(cx + 1, y + 1 + row, Fit(state, c.width() - cx - 1, u), style);
    if (i == in.state.fleet_row) c.Restyle(0, y + 1 + row, c.width(), Style::kSelected);
  }
  // Hosts that never answered have no GPU rows: a line each.
  for (const HostView& h : in.model.hosts) {
    if (h.state.snapshot || row >= body) continue;
    const std::string why =
        h.state.down.empty() ? "waiting for the first answer" : "down: " + h.state.down;
    c.Put(0, y + 1 + row++, Fit(fmt::format("{:<16} {}", h.state.label, why), c.width(), u),
          h.state.down.empty() ? Style::kDim : Style::kBad);
  }
}

}  // namespace gpuwatch::tui
