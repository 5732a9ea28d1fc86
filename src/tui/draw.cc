// Drawing helpers: numbers as short text, severities, bars and charts.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "export/status_text.h"
#include "tui/panes.h"

namespace gpuwatch::tui {

std::optional<double> NumberOf(const Reading& r) {
  if (!r.is_number()) return std::nullopt;
  return r.number();
}

std::string ShortBytes(std::optional<double> bytes, bool unicode) {
  if (!bytes) return unicode ? "—" : "-";
  const double b = *bytes;
  constexpr double kKi = 1024.0;
  if (b >= kKi * kKi * kKi * 100) return fmt::format("{:.0f}G", b / (kKi * kKi * kKi));
  if (b >= kKi * kKi * kKi) return fmt::format("{:.1f}G", b / (kKi * kKi * kKi));
  if (b >= kKi * kKi) return fmt::format("{:.0f}M", b / (kKi * kKi));
  if (b >= kKi) return fmt::format("{:.0f}K", b / kKi);
  return fmt::format("{:.0f}B", b);
}

std::string Percent(std::optional<double> ratio, bool unicode) {
  if (!ratio) return unicode ? "—" : "-";
  return fmt::format("{:.0f}%", *ratio * 100);
}

std::string Elapsed(std::optional<std::chrono::system_clock::duration> d, bool unicode) {
  if (!d) return unicode ? "—" : "-";
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(*d).count();
  if (s < 0) return "0:00";
  if (s >= 86400) return fmt::format("{}d{:02}h", s / 86400, s % 86400 / 3600);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

Style MemoryStyle(std::optional<double> ratio) {
  if (!ratio) return Style::kDim;
  if (*ratio >= 0.9) return Style::kBad;
  if (*ratio >= 0.75) return Style::kWarn;
  return Style::kOk;
}

Style TemperatureStyle(std::optional<double> celsius) {
  if (!celsius) return Style::kDim;
  if (*celsius >= 80) return Style::kBad;
  if (*celsius >= 70) return Style::kWarn;
  return Style::kOk;
}

Style ThrottleStyle(std::optional<double> mask) {
  if (!mask) return Style::kDim;
  const auto m = static_cast<unsigned long long>(*mask);
  constexpr unsigned long long kIdle = 0x1, kAppClocks = 0x2, kDisplayClocks = 0x100;
  constexpr unsigned long long kSevere = 0x8 | 0x20 | 0x40 | 0x80;  // hw, sw/hw thermal, brake
  if ((m & kSevere) != 0) return Style::kBad;
  if ((m & ~(kIdle | kAppClocks | kDisplayClocks)) != 0) return Style::kWarn;
  return Style::kOk;
}

Style SeverityStyle(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return Style::kNormal;
    case Severity::kWarning:
      return Style::kWarn;
    case Severity::kCritical:
      return Style::kBad;
  }
  return Style::kNormal;
}

void Bar(Canvas& c, int x, int y, int width, double used, double reserved, bool unicode,
         Style used_style) {
  if (width <= 0) return;
  used = std::clamp(used, 0.0, 1.0);
  reserved = std::clamp(reserved, 0.0, 1.0 - used);
  const double used_cells = used * width;
  const double reserved_end = (used + reserved) * width;
  static const char* const kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  for (int i = 0; i < width; ++i) {
    if (i + 1 <= used_cells) {
      c.Put(x + i, y, unicode ? "█" : "#", used_style);
    } else if (i < used_cells) {
      const int eighth = static_cast<int>((used_cells - i) * 8);
      c.Put(x + i, y, unicode ? (eighth > 0 ? kEighths[eighth] : "░") : "#",
            eighth > 0 ? used_style : Style::kBarFree);
    } else if (i < reserved_end) {
      c.Put(x + i, y, unicode ? "▒" : "+", Style::kBarReserved);
    } else {
      c.Put(x + i, y, unicode ? "░" : ".", Style::kBarFree);
    }
  }
}

namespace {

// The series' values binned into `bins` slots over [end - window, end]:
// the highest value of each slot (a peak is what matters), nullopt where
// no point fell.
std::vector<std::optional<double>> Bin(const Series& s, int bins, double end_s, double window_s) {
  std::vector<std::optional<double>> out(static_cast<std::size_t>(std::max(0, bins)));
  if (bins <= 0 || window_s <= 0) return out;
  const double start = end_s - window_s;
  for (auto it = s.points.rbegin(); it != s.points.rend(); ++it) {
    const auto& [t, v] = *it;
    if (t < start) break;
    if (t > end_s) continue;
    auto i = static_cast<int>((t - start) / window_s * bins);
    i = std::clamp(i, 0, bins - 1);
    auto& slot = out[static_cast<std::size_t>(i)];
    slot = slot ? std::max(*slot, v) : v;
  }
  return out;
}

}  // namespace

void Sparkline(Canvas& c, int x, int y, int width, const Series& s, double end_s, double window_s,
               double top, bool unicode) {
  static const char* const kBlocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  static const char kAscii[] = " .:-=+*#@";
  const auto bins = Bin(s, width, end_s, window_s);
  for (int i = 0; i < width; ++i) {
    const auto& v = bins[static_cast<std::size_t>(i)];
    if (!v) {
      c.Put(x + i, y, " ", Style::kDim);
      continue;
    }
    const int level = top > 0 ? std::clamp(static_cast<int>(std::lround(*v / top * 8)), 1, 8) : 1;
    c.Put(x + i, y, unicode ? kBlocks[level] : std::string(1, kAscii[level]), Style::kChart);
  }
}

void Chart(Canvas& c, int x, int y, int width, int height, const Series& s, double end_s,
           double window_s, double top, bool unicode) {
  if (width <= 0 || height <= 0) return;
  const auto bins = Bin(s, width * 2, end_s, window_s);
  const int dots = height * 4;
  // Dot bits of a braille cell, by column (left, right) and row (top to bottom).
  static const int kBits[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
  for (int cx = 0; cx < width; ++cx) {
    for (int cy = 0; cy < height; ++cy) {
      int bits = 0;
      bool any = false;
      for (int half = 0; half < 2; ++half) {
        const auto& v = bins[static_cast<std::size_t>(cx * 2 + half)];
        if (!v) continue;
        const int level =
            top > 0 ? std::clamp(static_cast<int>(std::lround(*v / top * dots)), 1, dots) : 1;
        // Dot rows filled from the bottom up to `level`.
        for (int r = 0; r < 4; ++r) {
          const int from_bottom = (height - 1 - cy) * 4 + (3 - r);
          if (from_bottom < level) {
            bits |= kBits[half][r];
            any = true;
          }
        }
      }
      if (!unicode) {
        c.Put(x + cx, y + cy, any ? "*" : " ", Style::kChart);
        continue;
      }
      const char32_t cp = 0x2800 + static_cast<char32_t>(bits);
      std::string glyph;
      glyph += static_cast<char>(0xE0 | (cp >> 12));
      glyph += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      glyph += static_cast<char>(0x80 | (cp & 0x3F));
      c.Put(x + cx, y + cy, glyph, Style::kChart);
    }
  }
}

std::string ClockText(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

}  // namespace gpuwatch::tui
