#include "tui/view.h"

#include <fmt/format.h>

#include <algorithm>

#include "tui/panes.h"

namespace gpuwatch::tui {
namespace {

std::string SourceBanner(const TopModel& m) {
  switch (m.kind) {
    case SourceKind::kDemo:
      return "DEMO";
    case SourceKind::kReplay:
      return "REPLAY";
    case SourceKind::kRemote:
      return "REMOTE";
    case SourceKind::kPrometheus:
      return "PROMETHEUS";
    case SourceKind::kLocal:
      return "";
  }
  return "";
}

void Header(const TopModel& m, const HostView* host, const RenderInput& in, Canvas& c) {
  const bool u = in.state.unicode;
  c.Put(0, 0, std::string(static_cast<std::size_t>(c.width()), ' '), Style::kHeader);
  std::string left = "gpuwatch top";
  if (host != nullptr) {
    const HostState& s = host->state;
    left += "  " + (s.hostname.empty() ? s.label : s.hostname);
    if (s.snapshot) {
      const Reading& driver = s.snapshot->host[FieldId::kDriverVersion];
      const Reading& cuda = s.snapshot->host[FieldId::kCudaDriverVersion];
      if (driver.is_text()) left += "  driver " + driver.text();
      if (cuda.is_text()) left += "  CUDA " + cuda.text();
    }
  } else {
    int gpus = 0, up = 0;
    for (const HostView& h : m.hosts) {
      up += h.state.down.empty() && h.state.snapshot ? 1 : 0;
      gpus += h.state.snapshot ? static_cast<int>(h.state.snapshot->devices.size()) : 0;
    }
    left += fmt::format("  fleet: {} of {} hosts up, {} GPUs", up, m.hosts.size(), gpus);
  }
  std::string time;
  if (host != nullptr && host->state.snapshot) time = ClockText(host->state.snapshot->time);
  if (m.replay) {
    time += fmt::format("  {}x{}{}", m.replay->speed, m.replay->paused ? " PAUSED" : "",
                        m.replay->finished ? " END" : "");
  }
  const int x = c.Put(0, 0, Fit(left, c.width() - 1, u), Style::kHeader);
  const std::string banner = SourceBanner(m);
  const int right = c.width() - Columns(time) - 1;
  if (right > x) c.Put(right, 0, time, Style::kHeader);
  if (!banner.empty()) {
    // With its detail (the scenario, the recording) when that fits.
    std::string b = " " + banner + (m.source_detail.empty() ? "" : " " + m.source_detail) + " ";
    if (Columns(b) > right - x - 2) b = " " + banner + " ";
    const int bx = std::max(x + 1, right - Columns(b) - 1);
    if (bx < right) c.Put(bx, 0, Fit(b, right - bx, u), Style::kBanner);
  }
}

void Tabs(const TopModel& m, const RenderInput& in, Canvas& c, int y, Layout& layout) {
  layout.tabs_y = y;
  int x = 0;
  auto tab = [&](const std::string& name, int index, Style style) {
    const std::string text = " " + name + " ";
    const int w = c.Put(x, y, text, index == in.state.tab ? Style::kSelected : style);
    layout.tabs.push_back({x, x + w, index});
    x += w + 1;
  };
  tab("Fleet", 0, Style::kBold);
  for (std::size_t i = 0; i < m.hosts.size(); ++i) {
    const HostState& s = m.hosts[i].state;
    tab(s.label + (s.down.empty() ? "" : " (down)"), static_cast<int>(i) + 1,
        s.down.empty() ? Style::kNormal : Style::kBad);
  }
}

void Footer(const RenderInput& in, Canvas& c) {
  const ViewState& st = in.state;
  const int y = c.height() - 1;
  const bool u = st.unicode;
  if (st.pending) {
    const PendingSignal& p = *st.pending;
    std::string pids;
    for (std::size_t i = 0; i < p.targets.size() && i < 6; ++i) {
      pids += (i ? ", " : "") + std::to_string(p.targets[i].pid);
    }
    if (p.targets.size() > 6) pids += ", ...";
    const std::string name = SignalName(p.signal);
    const std::string text =
        p.confirmations_needed > 1
            ? fmt::format(
                  "You are root: this signals other users' processes. Send {} to {} "
                  "(pid {})? y again to confirm, n cancels",
                  name, p.targets.size(), pids)
            : fmt::format("Send {} to {} process{} (pid {})? y / n", name, p.targets.size(),
                          p.targets.size() == 1 ? "" : "es", pids);
    c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), Style::kBad);
    c.Put(0, y, Fit(text, c.width(), u), Style::kBad);
    return;
  }
  if (st.editing_filter) {
    c.Put(0, y, Fit("filter: " + st.filter + "_   (Enter keeps it, Esc clears)", c.width(), u),
          Style::kWarn);
    return;
  }
  std::string text = st.message;
  if (text.empty()) {
    text = "q quit  h help  / filter  t tree  <> sort  Enter process  Space tag";
    if (!st.readonly && in.model.local()) text += "  T/K/I signal";
    if (!st.filter.empty()) text = "filter \"" + st.filter + "\" (Esc clears)  " + text;
  }
  c.Put(0, y, Fit(text, c.width(), u), st.message.empty() ? Style::kDim : Style::kWarn);
}

// The GPU the charts show: the selected process's, else the one chosen with
// a digit, else the first.
int ChartGpu(const HostView& host, const ViewState& st, const Layout& layout, int chosen) {
  if (chosen >= 0) return chosen;
  for (const ProcessRow& r : layout.rows) {
    if (st.selected && r.key == *st.selected && r.is_process) return r.gpu;
  }
  const Snapshot* s = host.state.snapshot.get();
  return s && !s->devices.empty() ? s->devices.front().index : 0;
}

void MainScreen(const HostView& host, const RenderInput& in, Canvas& c, int y, Layout& layout) {
  const int bottom = c.height() - 1;  // the footer's row
  const Snapshot* s = host.state.snapshot.get();
  if (s == nullptr) {
    const std::string what =
        host.state.down.empty() ? "waiting for the first sample..." : "down: " + host.state.down;
    int row = y + 1;
    for (const std::string& line : Wrap(what, c.width() - 2, bottom - row, in.state.unicode)) {
      c.Put(1, row++, line, host.state.down.empty() ? Style::kDim : Style::kBad);
    }
    return;
  }
  if (!host.state.down.empty()) {
    c.Put(0, y++,
          Fit("down: " + host.state.down + " (showing its last answer; retrying)", c.width(),
              in.state.unicode),
          Style::kBad);
  }
  const int gpus = static_cast<int>(s->devices.size());
  const int migs = static_cast<int>(s->mig_devices.size());
  const int rows = static_cast<int>(layout.rows.size());
  const int avail = bottom - y;
  // Full blocks need two lines a GPU and room for a useful table and events.
  const int full_gpu_lines = 2 * gpus + migs;
  const bool compact = c.width() < 100 || full_gpu_lines + 1 + std::min(rows, 4) + 1 + 3 > avail;
  layout.compact = compact;
  const int gpu_lines = compact ? gpus : full_gpu_lines;
  const double end_s = SecondsOf(s->time);
  y += DrawGpus(host, in, c, y, std::min(gpu_lines, avail), compact, end_s);
  int left = bottom - y;
  // Events: what the table does not need, 2 to 8 lines (none when even the
  // table is short of room); charts when there is room beyond both.
  const int table_want = 1 + std::max(1, std::min(rows, 12));
  int events = std::clamp(left - (1 + rows), 2, 8);
  if (left - events < std::min(table_want, 6)) events = 0;
  const int chart_room = left - table_want - events - 1;
  if (!compact && chart_room >= 6) {
    const int h = std::min(chart_room, c.width() >= 80 ? 10 : 20);
    y += 1 + DrawCharts(host, in, c, y + 1, h, ChartGpu(host, in.state, layout, in.state.chart_gpu),
                        end_s);
    left = bottom - y;
  }
  const int table_h = std::max(0, left - events);
  DrawTable(host, in, c, y, table_h, layout);
  if (events > 0) DrawEvents(host, in, c, bottom - events, events);
}

}  // namespace

FieldMask DrawnFields() {
  FieldMask m;
  for (FieldId id : {
           FieldId::kDriverVersion,
           FieldId::kCudaDriverVersion,
           FieldId::kIndex,
           FieldId::kName,
           FieldId::kUuid,
           FieldId::kMemoryTotalBytes,
           FieldId::kMemoryUsedBytes,
           FieldId::kMemoryReservedBytes,
           FieldId::kMemoryUsedRatio,
           FieldId::kUtilizationGpuRatio,
           FieldId::kUtilizationMemoryRatio,
           FieldId::kTemperatureGpuCelsius,
           FieldId::kPowerDrawWatts,
           FieldId::kPowerLimitWatts,
           FieldId::kClockSmHertz,
           FieldId::kClockMemoryHertz,
           FieldId::kClockEventReasons,
           FieldId::kPcieLinkGenCurrent,
           FieldId::kPcieLinkWidthCurrent,
           FieldId::kPcieTxBytesPerSecond,
           FieldId::kPcieRxBytesPerSecond,
           FieldId::kProcessUsedMemoryBytes,
           FieldId::kProcessSmUtilizationRatio,
           FieldId::kProcessRssBytes,
           FieldId::kProcessCpuRatio,
           FieldId::kMigMode,  // MIG instances are read, and drawn, only when it is on
       }) {
    Set(m, id);
  }
  return m;
}

Layout Render(const RenderInput& in, Canvas& c) {
  Layout layout;
  const TopModel& m = in.model;
  ViewState& st = in.state;
  if (c.width() < kMinWidth || c.height() < kMinHeight) {
    c.Put(0, 0,
          Fit(fmt::format("terminal too small ({}x{}): gpuwatch top needs {}x{}", c.width(),
                          c.height(), kMinWidth, kMinHeight),
              c.width(), false),
          Style::kWarn);
    return layout;
  }
  const bool fleet = m.hosts.size() > 1;
  const int tabs = fleet ? static_cast<int>(m.hosts.size()) + 1 : 1;
  st.tab = std::clamp(st.tab, 0, tabs - 1);
  const HostView* host = nullptr;
  if (!m.hosts.empty())
    host = fleet ? (st.tab == 0 ? nullptr : &m.hosts[static_cast<std::size_t>(st.tab - 1)])
                 : &m.hosts.front();
  if (host != nullptr) layout.rows = BuildRows(*host, st, in.families, in.now);
  if (st.screen == Screen::kHelp) {
    DrawHelp(in, c, layout);
    Footer(in, c);
    return layout;
  }
  if (host != nullptr && st.screen == Screen::kProcess) {
    DrawProcess(*host, in, c, layout);
    Footer(in, c);
    return layout;
  }
  if (host != nullptr && st.screen == Screen::kEnvironment) {
    DrawEnvironment(in, c);
    Footer(in, c);
    return layout;
  }
  // The selection follows its process; when that is gone, the first row.
  if (host != nullptr) {
    const bool present =
        st.selected && std::any_of(layout.rows.begin(), layout.rows.end(),
                                   [&](const ProcessRow& r) { return r.key == *st.selected; });
    if (!present)
      st.selected = layout.rows.empty() ? std::nullopt : std::optional(layout.rows.front().key);
  }
  Header(m, host, in, c);
  int y = 1;
  if (fleet) Tabs(m, in, c, y++, layout);
  if (host == nullptr) {
    if (fleet) DrawFleet(in, c, y, c.height() - 1 - y, layout);
  } else {
    MainScreen(*host, in, c, y, layout);
  }
  Footer(in, c);
  return layout;
}

}  // namespace gpuwatch::tui
