// Leak detection on one memory series (a process's or a device's used bytes
// over time). The detector follows the floor (FloorTracker), and on each new
// floor point tests windows of the recent floor, min_span × 1, 2, 4, ... up to
// max_lookback: a window shows a leak when its Theil–Sen slope is at least
// min_rate, the Mann–Kendall test says the rise is significant (z >= z_critical)
// and its newer half still rises on its own (slope >= min_rate and >=
// newer_half_share × the window's slope, z >= z_newer_half): the growth has
// not stopped. Suspected when any window shows a leak; cleared only when none does
// and the floor of the last clear_after has been flat (slope below min_rate).
// docs/leaks.md explains the defaults. Not thread-safe; one owner.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

#include "analysis/leaks/floor_tracker.h"

namespace gpuwatch::leaks {

inline constexpr double kMiB = 1024.0 * 1024.0;

struct LeakOptions {
  std::chrono::seconds floor_window{std::chrono::minutes(5)};  // minimum taken over this
  std::chrono::seconds grace{std::chrono::minutes(5)};      // ignored after first sight (warm-up)
  std::chrono::seconds min_span{std::chrono::minutes(40)};  // the shortest window tested
  std::chrono::seconds max_lookback{std::chrono::minutes(320)};  // the longest window tested
  std::chrono::seconds clear_after{std::chrono::minutes(60)};    // flat this long to clear
  double min_rate_bytes_per_s = 0.5 * kMiB / 60;                 // 0.5 MiB/min
  double z_critical = 3.09;                                      // one-sided alpha = 0.001
  double z_newer_half = 1.645;       // the newer half on its own: one-sided alpha = 0.05
  double newer_half_share = 0.25;    // newer half's slope >= this × the window's slope
  std::size_t history_points = 288;  // 24 h of 5 min floors before merging
};

// The defaults with every window scaled to `floor_window` (default 5 min):
// grace 1×, shortest tested window 8×, longest 64×, clear after 12×. For
// short jobs with fast steps (a 30 s floor decides after ~4.5 min); the
// floor window must stay longer than a step and an evaluation pass.
LeakOptions ScaledLeakOptions(std::chrono::seconds floor_window);

struct LeakEstimate {
  bool suspected = false;
  bool enough_evidence = false;     // a window of min_span was tested
  bool growing = false;             // rate >= min_rate and significant (newer half not required)
  double rate_bytes_per_s = 0;      // floor slope of the reported window
  double rate_low_bytes_per_s = 0;  // Sen's ~95 % interval
  double rate_high_bytes_per_s = 0;
  double confidence = 0;           // 1 - one-sided Mann–Kendall p-value
  double floor_bytes = 0;          // the newest floor point
  double last_bytes = 0;           // the newest sample
  double peak_bytes = 0;           // highest sample of the last closed and the open window
  std::chrono::seconds window{0};  // length of the reported window
  std::size_t points = 0;          // floor points in it
  double rate_mib_per_min() const { return rate_bytes_per_s * 60 / kMiB; }
};

enum class LeakChange { kNone, kSuspected, kCleared };

class LeakDetector {
 public:
  explicit LeakDetector(const LeakOptions& options = {});

  // One sample of used bytes; times non-decreasing. Returns the state change
  // this sample caused (decisions are taken when a floor window closes).
  LeakChange Observe(std::chrono::system_clock::time_point time, double bytes);

  const LeakEstimate& estimate() const { return estimate_; }
  const LeakOptions& options() const { return options_; }
  // Floor points held (bounded by options.history_points + 1).
  std::size_t history_size() const { return floor_.points().size(); }

 private:
  struct WindowResult {
    LeakEstimate estimate;
    bool shows_leak = false;
  };
  std::optional<WindowResult> TestWindow(double lookback_s) const;
  bool FlatFor(double span_s) const;
  LeakChange Decide();

  LeakOptions options_;
  FloorTracker floor_;
  std::optional<std::chrono::system_clock::time_point> origin_;
  LeakEstimate estimate_;
};

}  // namespace gpuwatch::leaks
