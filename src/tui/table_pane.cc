// The process table (sortable header, selection, tags, tree) and the
// events pane.
#include <fmt/format.h>

#include <algorithm>

#include "tui/panes.h"

namespace gpuwatch::tui {
namespace {

struct ColumnSpec {
  Column column;
  int width;     // 0: the rest of the line (the command)
  int priority;  // dropped first when the line is narrow: highest number
  bool right;    // right-aligned (numbers)
};

std::string CellText(const ProcessRow& r, Column c, bool u) {
  switch (c) {
    case Column::kPid:
      return std::to_string(r.key.pid);
    case Column::kUser:
      return r.user;
    case Column::kGpu:
      if (!r.is_process) return "";
      return r.mig ? fmt::format("{}:{}", r.gpu, *r.mig) : std::to_string(r.gpu);
    case Column::kMemory:
      return r.is_process ? ShortBytes(r.memory, u) : "";
    case Column::kSm:
      return r.is_process ? Percent(r.sm, u) : "";
    case Column::kCpu:
      return r.is_process ? Percent(r.cpu, u) : "";
    case Column::kHostMemory:
      return r.is_process ? ShortBytes(r.rss, u) : "";
    case Column::kTime:
      return r.is_process ? Elapsed(r.elapsed, u) : "";
    case Column::kWhere:
      return r.where;
    case Column::kFramework:
      if (!r.framework_allocated && !r.framework_reserved) return "";
      return ShortBytes(r.framework_allocated, u) + "/" + ShortBytes(r.framework_reserved, u);
    case Column::kLease:
      return r.lease;
    case Column::kCommand:
      return r.branch + r.command;
  }
  return "";
}

// The columns that fit `width`: optional ones only when some row has a
// value for them, and the least needed dropped first.
std::vector<ColumnSpec> Fitting(const std::vector<ProcessRow>& rows, int width) {
  bool where = false, framework = false, lease = false;
  for (const ProcessRow& r : rows) {
    where = where || !r.where.empty();
    framework = framework || r.framework_allocated || r.framework_reserved;
    lease = lease || !r.lease.empty();
  }
  std::vector<ColumnSpec> all = {
      {Column::kPid, 7, 0, true},        {Column::kUser, 9, 1, false},
      {Column::kGpu, 4, 0, true},        {Column::kMemory, 8, 0, true},
      {Column::kSm, 4, 2, true},         {Column::kCpu, 5, 3, true},
      {Column::kHostMemory, 8, 6, true}, {Column::kTime, 8, 5, true},
      {Column::kWhere, 19, 7, false},    {Column::kFramework, 13, 4, false},
      {Column::kLease, 8, 8, false},     {Column::kCommand, 0, 0, false},
  };
  std::erase_if(all, [&](const ColumnSpec& s) {
    return (s.column == Column::kWhere && !where) ||
           (s.column == Column::kFramework && !framework) || (s.column == Column::kLease && !lease);
  });
  constexpr int kCommandMin = 24;
  auto needed = [&] {
    int n = 2 + kCommandMin;  // the tag mark and the command
    for (const ColumnSpec& s : all) n += s.width + 1;
    return n;
  };
  while (needed() > width) {
    auto worst = std::max_element(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return a.priority < b.priority;
    });
    if (worst == all.end() || worst->priority == 0) break;
    all.erase(worst);
  }
  return all;
}

}  // namespace

int DrawTable(const HostView& host, const RenderInput& in, Canvas& c, int y, int height,
              Layout& layout) {
  ViewState& st = in.state;
  const bool u = st.unicode;
  if (height < 2) return 0;
  const std::vector<ProcessRow>& rows = layout.rows;
  const std::vector<ColumnSpec> cols = Fitting(rows, c.width());
  // The header: each title clickable; the sort column marked.
  layout.header_y = y;
  c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), Style::kHeader);
  int x = 2;
  for (const ColumnSpec& s : cols) {
    std::string title(ColumnTitle(s.column));
    if (s.column == st.sort) title += st.reverse ? (u ? "▼" : "v") : (u ? "▲" : "^");
    const int w = s.width == 0 ? c.width() - x : s.width;
    const std::string text = s.right ? fmt::format("{:>{}}", title, w) : title;
    c.Put(x, y, Fit(text, w, u), Style::kHeader);
    layout.header.push_back({x, x + w, static_cast<int>(s.column)});
    x += w + 1;
  }
  const int body = height - 1;
  layout.table_y = y + 1;
  layout.table_rows = body;
  layout.page = std::max(1, body - 1);
  if (rows.empty()) {
    const bool any =
        host.state.snapshot &&
        std::any_of(host.state.snapshot->devices.begin(), host.state.snapshot->devices.end(),
                    [](const DeviceSample& d) { return !d.processes.empty(); });
    c.Put(2, y + 1,
          !st.filter.empty() && any ? "no process matches the filter \"" + st.filter + "\""
                                    : "no GPU processes",
          Style::kDim);
    return 2;
  }
  // Keep the selection on screen.
  int selected = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (st.selected && rows[i].key == *st.selected) {
      selected = static_cast<int>(i);
      break;
    }
  }
  st.scroll = std::clamp(st.scroll, 0, std::max(0, static_cast<int>(rows.size()) - body));
  if (selected < st.scroll) st.scroll = selected;
  if (selected >= st.scroll + body) st.scroll = selected - body + 1;
  for (int i = 0; i < body && st.scroll + i < static_cast<int>(rows.size()); ++i) {
    const ProcessRow& r = rows[static_cast<std::size_t>(st.scroll + i)];
    const int ry = y + 1 + i;
    const bool tagged = st.tagged.count(r.key) != 0;
    const bool is_selected = st.selected && r.key == *st.selected && st.scroll + i == selected;
    Style base = r.is_process ? Style::kNormal : Style::kDim;
    if (tagged) base = Style::kTagged;
    c.Put(0, ry, tagged ? "*" : " ", base);
    int cx = 2;
    for (const ColumnSpec& s : cols) {
      const int w = s.width == 0 ? c.width() - cx : s.width;
      std::string text = CellText(r, s.column, u);
      Style style = base;
      if (s.column == Column::kCommand) {
        if (r.leaking) {
          cx += c.Put(cx, ry, "[leak] ", Style::kBad);
        }
        if (r.preallocated) {
          cx += c.Put(cx, ry, "[prealloc] ", Style::kWarn);
        }
        c.Put(cx, ry, Fit(text, c.width() - cx, u), style);
        break;
      }
      if (s.column == Column::kMemory && r.memory && host.state.snapshot) {
        style = tagged ? base : Style::kNormal;
      }
      const std::string cell =
          s.right ? fmt::format("{:>{}}", Fit(text, w, u), w) : Fit(text, w, u);
      c.Put(cx, ry, cell, style);
      cx += w + 1;
    }
    if (is_selected) c.Restyle(0, ry, c.width(), Style::kSelected);
  }
  return 1 + std::min(body, static_cast<int>(rows.size()) - st.scroll);
}

int DrawEvents(const HostView& host, const RenderInput& in, Canvas& c, int y, int height) {
  if (height < 2) return 0;
  const bool u = in.state.unicode;
  int x = c.Put(0, y, u ? "── events " : "-- events ", Style::kDim);
  for (; x < c.width(); ++x) c.Put(x, y, u ? "─" : "-", Style::kDim);
  const int lines = height - 1;
  if (host.events.empty()) {
    c.Put(2, y + 1, "no events yet: alerts, leaks, forecasts, diagnoses and marks show here",
          Style::kDim);
    return 2;
  }
  const int n = std::min(lines, static_cast<int>(host.events.size()));
  for (int i = 0; i < n; ++i) {
    const Event& e = host.events[host.events.size() - static_cast<std::size_t>(n - i)];
    const int ey = y + 1 + i;
    int ex = c.Put(0, ey, ClockText(e.time) + " ", Style::kDim);
    ex += c.Put(ex, ey, std::string(EventKindName(e.kind)) + " ", SeverityStyle(e.severity));
    c.Put(ex, ey, Fit(e.message, c.width() - ex, u), Style::kNormal);
  }
  return 1 + n;
}

}  // namespace gpuwatch::tui
