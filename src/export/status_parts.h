// What the full and the compact status views (status_text.cc,
// status_compact.cc) draw alike: colours, N/A, percentages, bars, cut text,
// a process's container, and the banner and host line that open both.
#pragma once

#include <string>
#include <string_view>

#include "export/status_text.h"

namespace gpuwatch::status_parts {

inline constexpr std::string_view kReset = "\033[0m";
inline constexpr std::string_view kBold = "\033[1m";
inline constexpr std::string_view kRed = "\033[31m";
inline constexpr std::string_view kYellow = "\033[33m";
inline constexpr std::string_view kDim = "\033[2m";

// Wraps text in an ANSI style when colour is on.
struct Painter {
  bool on;
  std::string operator()(std::string_view style, std::string_view text) const;
};

// Red at or above `bad`, yellow at or above `warn`, else no style.
std::string_view Level(double v, double warn, double bad);
// "lost" for a GPU that is gone, else "N/A".
std::string Na(const Reading& r);
// " 94%", or N/A.
std::string Percent(const Reading& r);
// "█████░░░" with `width` cells, `ratio` of them full.
std::string Bar(double ratio, int width);
// One line: control characters become spaces, runs of spaces collapse, and
// the result is cut to `width` characters (counted as bytes but for a
// trailing "…").
std::string Cut(const std::string& raw, int width);
// "docker 4b8e2f0c1d9a", "slurm 4242", or "-".
std::string Container(const HostProcess& h);
// Under a low GPU utilization while processes hold it (input-bound or idle).
bool LooksStarved(const DeviceSample& d);
// The DEMO / REPLAY banner and "host  driver …  CUDA …  N GPUs  time", with
// the blank line after it.
std::string Heading(const Snapshot& s, const StatusTextOptions& o, const Painter& paint);

// "queue: 2 waiting" and a line per waiter, first served first; "" when
// nobody waits.
std::string Queue(const StatusTextOptions& o, const Painter& paint);

}  // namespace gpuwatch::status_parts
