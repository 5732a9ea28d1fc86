// The view's parts (view.cc puts them together) and the drawing helpers
// they share. Internal to src/tui.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "tui/canvas.h"
#include "tui/history.h"
#include "tui/view.h"

namespace gpuwatch::tui {

// "71.2G", "512M", "—" (compact numbers for tables and bars).
std::string ShortBytes(std::optional<double> bytes, bool unicode);
std::string Percent(std::optional<double> ratio, bool unicode);  // "34%"
std::string Elapsed(std::optional<std::chrono::system_clock::duration> d, bool unicode);
std::optional<double> NumberOf(const Reading& r);

Style MemoryStyle(std::optional<double> ratio);
Style TemperatureStyle(std::optional<double> celsius);
// Clock event reasons: thermal or power-brake slowdowns are bad, a power
// cap or other limit a warning; idle and application clocks are not limits.
Style ThrottleStyle(std::optional<double> mask);
Style SeverityStyle(Severity s);

// A bar of `width` cells: `used` of 1 in kBarUsed, then `reserved` in
// kBarReserved, the rest kBarFree (Unicode: eighth blocks; ASCII: '#', '+', '.').
void Bar(Canvas& c, int x, int y, int width, double used, double reserved, bool unicode,
         Style used_style = Style::kBarUsed);
// The series over the last `window` ending at `end` as one row of `width`
// cells (block heights; ASCII: " .:-=+*#"), scaled to [0, top].
void Sparkline(Canvas& c, int x, int y, int width, const Series& s, double end_s, double window_s,
               double top, bool unicode);
// The same over `height` rows, in braille (2 × 4 dots a cell; ASCII: '*').
void Chart(Canvas& c, int x, int y, int width, int height, const Series& s, double end_s,
           double window_s, double top, bool unicode);

// Panes. Each draws within rows [y, y + height) and returns the rows used.
int DrawGpus(const HostView& host, const RenderInput& in, Canvas& c, int y, int height,
             bool compact, double end_s);
int DrawCharts(const HostView& host, const RenderInput& in, Canvas& c, int y, int height, int gpu,
               double end_s);
int DrawTable(const HostView& host, const RenderInput& in, Canvas& c, int y, int height,
              Layout& layout);
int DrawEvents(const HostView& host, const RenderInput& in, Canvas& c, int y, int height);
void DrawFleet(const RenderInput& in, Canvas& c, int y, int height, Layout& layout);
void DrawProcess(const HostView& host, const RenderInput& in, Canvas& c, Layout& layout);
void DrawEnvironment(const RenderInput& in, Canvas& c);
void DrawHelp(const RenderInput& in, Canvas& c, Layout& layout);

// The clock text "14:02:03" (local time).
std::string ClockText(std::chrono::system_clock::time_point t);

}  // namespace gpuwatch::tui
