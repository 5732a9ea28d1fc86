// The GPU pane: a block per GPU (one line compact, two full) with its MIG
// devices under it, and the chart pane for one GPU.
#include <fmt/format.h>

#include <algorithm>

#include "export/status_text.h"
#include "tui/panes.h"

namespace gpuwatch::tui {
namespace {

std::string ShortName(const Reading& name) {
  if (!name.is_text()) return "GPU";
  std::string n = name.text();
  for (std::string_view prefix : {"NVIDIA ", "Tesla "}) {
    if (n.rfind(prefix, 0) == 0) n.erase(0, prefix.size());
  }
  return n;
}

struct Cursor {
  Canvas& c;
  int x;
  int y;
  int Put(std::string_view text, Style s = Style::kNormal) {
    const int n = c.Put(x, y, text, s);
    x += n;
    return n;
  }
};

// One GPU or MIG device: name, memory bar, utilization, temperature, power.
void MainLine(const DeviceSample& d, const HostState& host, const RenderInput& in, Canvas& c, int y,
              bool compact, int indent) {
  const bool u = in.state.unicode;
  const auto& f = d.fields;
  const int w = c.width();
  Cursor cur{c, indent, y};
  const std::string id =
      d.mig_index ? fmt::format("{}:{}", d.index, *d.mig_index) : std::to_string(d.index);
  cur.Put(fmt::format("{:>3} ", id), Style::kBold);
  const int name_width = compact ? 10 : 16;
  cur.Put(fmt::format("{:<{}}", Fit(ShortName(f[FieldId::kName]), name_width, u), name_width),
          Style::kBold);
  if (d.health == DeviceHealth::kLost) {
    cur.Put(" LOST ", Style::kBad);
    cur.Put(Fit(d.health_detail, w - cur.x, u), Style::kBad);
    return;
  }
  const bool stale = d.health == DeviceHealth::kStale || host.snapshot->stale || !host.down.empty();
  const auto used = NumberOf(f[FieldId::kMemoryUsedBytes]);
  const auto total = NumberOf(f[FieldId::kMemoryTotalBytes]);
  const auto reserved = NumberOf(f[FieldId::kMemoryReservedBytes]);
  std::optional<double> ratio = NumberOf(f[FieldId::kMemoryUsedRatio]);
  if (!ratio && used && total && *total > 0) ratio = *used / *total;
  // The bar takes what the numbers leave: at least 8 cells.
  // Everything else on the line: id, name, numbers, temperature, power, flags.
  const int fixed = compact ? 64 : 84;
  const int bar = std::clamp(w - indent - fixed, 8, compact ? 20 : 40);
  cur.Put(" MEM ", Style::kDim);
  Bar(c, cur.x, y, bar, ratio.value_or(0), reserved && total && *total > 0 ? *reserved / *total : 0,
      u, MemoryStyle(ratio));
  cur.x += bar;
  cur.Put(fmt::format(" {:>6}/{:<6}", ShortBytes(used, u), ShortBytes(total, u)),
          MemoryStyle(ratio));
  const auto util = NumberOf(f[FieldId::kUtilizationGpuRatio]);
  cur.Put(" UTIL ", Style::kDim);
  cur.Put(fmt::format("{:>4}", Percent(util, u)), util ? Style::kNormal : Style::kDim);
  if (!compact) {
    cur.Put(" MU ", Style::kDim);
    cur.Put(fmt::format("{:>4}", Percent(NumberOf(f[FieldId::kUtilizationMemoryRatio]), u)));
  }
  const auto temp = NumberOf(f[FieldId::kTemperatureGpuCelsius]);
  cur.Put(" ");
  cur.Put(temp ? fmt::format("{:>3.0f}{}", *temp, u ? "°C" : "C") : (u ? "  —" : "  -"),
          TemperatureStyle(temp));
  const auto power = NumberOf(f[FieldId::kPowerDrawWatts]);
  const auto limit = NumberOf(f[FieldId::kPowerLimitWatts]);
  cur.Put(" ");
  if (power) {
    const std::string p =
        limit ? fmt::format("{:.0f}/{:.0f}W", *power, *limit) : fmt::format("{:.0f}W", *power);
    cur.Put(fmt::format("{:>9}", p),
            limit && *power >= 0.95 * *limit ? Style::kWarn : Style::kNormal);
  } else if (!d.mig_index) {
    cur.Put(u ? "        —" : "        -", Style::kDim);
  }
  // STALE first: it qualifies every number on the line, and a narrow line
  // cuts what comes last.
  if (stale) cur.Put(" STALE", Style::kWarn);
  const auto reasons = NumberOf(f[FieldId::kClockEventReasons]);
  if (ThrottleStyle(reasons) == Style::kBad || ThrottleStyle(reasons) == Style::kWarn) {
    cur.Put(compact ? " THR" : " THROTTLED", ThrottleStyle(reasons));
  }
  if (d.health == DeviceHealth::kError) cur.Put(" ERROR", Style::kBad);
}

// The second line of a full block: clocks, PCIe, throttle reasons, reserved,
// processes, lease, and the memory and utilization sparklines.
void DetailLine(const DeviceSample& d, const HostView& host, const RenderInput& in, Canvas& c,
                int y, double end_s) {
  const bool u = in.state.unicode;
  const auto& f = d.fields;
  Cursor cur{c, 4, y};
  auto mhz = [&](FieldId id) {
    const auto v = NumberOf(f[id]);
    return v ? fmt::format("{:.0f}", *v / 1e6) : std::string(u ? "—" : "-");
  };
  cur.Put("SM ", Style::kDim);
  cur.Put(mhz(FieldId::kClockSmHertz) + "MHz");
  cur.Put(" MEM ", Style::kDim);
  cur.Put(mhz(FieldId::kClockMemoryHertz) + "MHz");
  const auto gen = NumberOf(f[FieldId::kPcieLinkGenCurrent]);
  const auto width = NumberOf(f[FieldId::kPcieLinkWidthCurrent]);
  if (gen && width) {
    cur.Put(" PCIe ", Style::kDim);
    cur.Put(fmt::format("{:.0f}x{:.0f}", *gen, *width));
  }
  const auto rx = NumberOf(f[FieldId::kPcieRxBytesPerSecond]);
  const auto tx = NumberOf(f[FieldId::kPcieTxBytesPerSecond]);
  if (rx || tx) {
    cur.Put(fmt::format(" {}{}/s {}{}/s", u ? "↓" : "rx ", ShortBytes(rx, u), u ? "↑" : "tx ",
                        ShortBytes(tx, u)));
  }
  const auto reserved = NumberOf(f[FieldId::kMemoryReservedBytes]);
  if (reserved) {
    cur.Put(" res ", Style::kDim);
    cur.Put(ShortBytes(reserved, u));
  }
  const auto reasons = NumberOf(f[FieldId::kClockEventReasons]);
  if (reasons && ThrottleStyle(reasons) != Style::kOk) {
    cur.Put(" ");
    cur.Put(DescribeClockEventReasons(static_cast<unsigned long long>(*reasons)),
            ThrottleStyle(reasons));
  }
  if (host.state.leases) {
    const Reading& uuid = f[FieldId::kUuid];
    if (const host::Lease* l = uuid.is_text() ? host.state.leases->Find(uuid.text()) : nullptr) {
      cur.Put(" lease ", Style::kDim);
      cur.Put(l->user, Style::kWarn);
    }
  }
  // Sparklines at the right when there is room: memory and utilization.
  const int spark = std::min(30, (c.width() - cur.x - 14) / 2);
  const DeviceHistory* h = host.history.device(d.index);
  if (spark >= 6 && h != nullptr && !d.mig_index) {
    const double window = static_cast<double>(kChartWindows[in.state.chart_window].count());
    int x = c.width() - 2 * spark - 10;
    c.Put(x, y, "mem", Style::kDim);
    Sparkline(c, x + 4, y, spark, h->memory_ratio, end_s, window, 1, u);
    x += spark + 5;
    c.Put(x, y, "util", Style::kDim);
    Sparkline(c, x + 5, y, spark - 1, h->utilization, end_s, window, 1, u);
  }
}

}  // namespace

int DrawGpus(const HostView& host, const RenderInput& in, Canvas& c, int y, int height,
             bool compact, double end_s) {
  const Snapshot* s = host.state.snapshot.get();
  if (s == nullptr) return 0;
  int row = 0;
  for (const DeviceSample& d : s->devices) {
    if (row >= height) break;
    MainLine(d, host.state, in, c, y + row++, compact, 0);
    if (!compact && row < height) DetailLine(d, host, in, c, y + row++, end_s);
    for (const DeviceSample& m : s->mig_devices) {
      if (m.index != d.index || row >= height) continue;
      if (compact) continue;
      MainLine(m, host.state, in, c, y + row++, true, 4);
    }
  }
  return row;
}

int DrawCharts(const HostView& host, const RenderInput& in, Canvas& c, int y, int height, int gpu,
               double end_s) {
  const DeviceHistory* h = host.history.device(gpu);
  if (h == nullptr || height < 3) return 0;
  const bool u = in.state.unicode;
  const auto window = kChartWindows[in.state.chart_window];
  const double window_s = static_cast<double>(window.count());
  const std::string span = kChartWindowNames[in.state.chart_window];
  const Snapshot* s = host.state.snapshot.get();
  std::optional<double> power_top;
  if (s != nullptr) {
    for (const DeviceSample& d : s->devices) {
      if (d.index == gpu) power_top = NumberOf(d.fields[FieldId::kPowerLimitWatts]);
    }
  }
  struct Panel {
    const char* title;
    const Series& series;
    double top;
    std::string now;
  };
  const auto pct = [&](const Series& x) { return Percent(x.last(), u); };
  double power_max = power_top.value_or(0);
  for (const auto& p : h->power_watts.points) power_max = std::max(power_max, p.second);
  const Panel panels[] = {
      {"memory", h->memory_ratio, 1, pct(h->memory_ratio)},
      {"utilization", h->utilization, 1, pct(h->utilization)},
      {"power", h->power_watts, power_max,
       h->power_watts.last() ? fmt::format("{:.0f} W", *h->power_watts.last()) : ""},
      {"temperature", h->temperature, 100,
       h->temperature.last() ? fmt::format("{:.0f} {}", *h->temperature.last(), u ? "°C" : "C")
                             : ""},
  };
  // Two panels a row; each a title line and the chart under it.
  const int cols = c.width() >= 80 ? 2 : 1;
  const int panel_w = c.width() / cols;
  const int rows_of_panels = (4 + cols - 1) / cols;
  const int chart_h = std::max(1, std::min(4, height / rows_of_panels - 1));
  int used = 0;
  for (int i = 0; i < 4; ++i) {
    const int py = y + (i / cols) * (chart_h + 1);
    if (py + chart_h + 1 > y + height) break;
    const int px = (i % cols) * panel_w;
    c.Put(px, py,
          Fit(fmt::format("GPU {} {} {} (last {})", gpu, panels[i].title, panels[i].now, span),
              panel_w - 1, u),
          Style::kDim);
    Chart(c, px, py + 1, panel_w - 1, chart_h, panels[i].series, end_s, window_s, panels[i].top, u);
    used = std::max(used, py + chart_h + 1 - y);
  }
  return used;
}

}  // namespace gpuwatch::tui
