// Leak detection on one memory series (a process's or a device's used bytes,
// or a framework's allocated bytes, over time), with judgement that scales
// with the danger: the faster memory would run out, the less evidence a
// warning needs.
//
// The series is followed at several time scales: the floor (FloorTracker, the
// minimum of each window) over windows of base, 2×base, ... (default 5 s to
// 320 s). A scale is used only while its window holds a few samples and is
// longer than the series' recent teeth (ToothTracker): a floor window shorter
// than a tooth follows the tooth's rising edge. When a scale closes a floor
// window, spans of 8 to 64 of its windows are tested; a span shows *sustained
// growth* when its Theil–Sen slope is at least min_rate and Mann–Kendall says
// the rise is significant (z >= z_critical), each half rises on its own
// (slope >= half_share × the span's slope and >= min_rate, z >= z_half) and
// its newest quarter still rises (slope >= half_share × the span's slope). A
// step, a warm-up that stopped and a tooth's edge all fail one of these.
//
// With the time to full T = headroom / rate (headroom = the device's free
// memory at its recent peak, as the caller gives it: OOM strikes at the top
// of the sawtooth of every process on the device):
//  - a *forecast* (OOM soon) is raised when some steady span (halves within
//    steady_ratio) of length L shows sustained growth with T <= urgency × L
//    and T <= forecast_horizon, while the newest floor of the finest usable
//    scale (its last max(2, stop_span / window) points) still rises. It stands while the
//    growth goes on within the horizon; a stop is taken for real once seen
//    for two base windows of decisions, counting only the new floor points of
//    that scale (so at once on a scale longer than that: the decisions between
//    its windows judge the same points again), and a tooth that rules the forecast's scale out
//    and takes memory back below where it was raised ends it at once. Where the
//    teeth repeat at a regular period, memory against the same moment a period
//    earlier shows a stop within a stop span too (PhaseStopped);
//  - a *leak verdict* needs sustained growth, with halves within
//    verdict_ratio, over L >= clamp(T / verdict_urgency, verdict_min_span,
//    verdict_max_span): longer than any warm-up, and at most verdict_max_span
//    for slow leaks. Its middle half rises too (slope >= half_share × the
//    span's: a warm-up at a span's start and one step at its end fill both
//    halves, not the middle), and its rise stands out of its floor's jitter
//    (at least the 10-90 % spread of the residuals: many spans are tested at
//    every decision, so now and then one passes on noise alone). It also
//    needs growth now: the newest floor of the finest usable scale still
//    rising (as a forecast does), or its scale qualifying it again on the
//    next window it closes (between the steps of a stepwise leak the finest
//    floor is flat; a span that passes on noise rarely passes twice). It is
//    cleared only when no span shows growth and the floor has been flat for
//    clear_after or longer, long enough that its slope's upper ~95 % bound is
//    below a quarter of the reported rate.
// The rate reported is that of the longest steady span that agrees with the
// shortest ones. A standing forecast or verdict is updated when its predicted
// time of full moves by more than a quarter and the rate it gave is outside
// the new rate's ~95 % interval, on a span that would qualify a first report
// at the new rate (a forecast's or a verdict's) and, for a slower rate, is at
// least as long as the one that gave the rate it replaces. docs/leaks.md
// explains the defaults.
// Not thread-safe; one owner.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "analysis/leaks/floor_tracker.h"
#include "analysis/leaks/robust_stats.h"
#include "analysis/leaks/tooth_tracker.h"
#include "gpuwatch/units.h"

namespace gpuwatch::leaks {

inline constexpr double kMiB = kBytesPerMiB;
inline constexpr double kGiB = kBytesPerGiB;

struct LeakOptions {
  std::chrono::seconds base_window{5};  // the finest floor window
  int scales = 7;                       // base × 1, 2, 4, ... 64
  double min_windows = 8;               // the shortest span tested, in floor windows
  double max_windows = 64;              // the longest
  double span_step = 1.5;               // spans grow by this factor
  double min_samples_per_window = 3;    // a scale needs this many samples per window
  double tooth_margin = 1.1;            // ... and a window this × the longest recent tooth
  double min_rate_bytes_per_s = 0.5 * kMiB / 60;  // 0.5 MiB/min
  double z_critical = 3.09;                       // one-sided alpha = 0.001
  double z_half = 1.645;                          // each half on its own: alpha = 0.05
  double half_share = 0.25;  // a half's (and the newest quarter's) slope >= this × the span's
  double urgency = 25;       // a forecast needs T <= urgency × its span
  // ... and T within this: beyond it a verdict (at most verdict_max_span)
  // comes before 10 % of T has passed anyway.
  std::chrono::seconds forecast_horizon{std::chrono::minutes(300)};
  double verdict_urgency = 4;  // a verdict needs a span >= T / verdict_urgency, clamped to:
  std::chrono::seconds verdict_min_span{std::chrono::minutes(10)};
  std::chrono::seconds verdict_max_span{std::chrono::minutes(30)};
  std::chrono::seconds stop_span{40};  // the newest floor over this tells growth stopped
  // A verdict clears once the floor is flat this long or longer (GrowthGone).
  std::chrono::seconds clear_after{std::chrono::minutes(60)};
  double update_share = 0.25;  // re-report when the predicted time of full moves this much
  // A slower rate replaces the reported one only on a span this × as long as
  // the one that read it: a calm between bursts, or an aliased sawtooth's
  // beat, reads slow over a span about as long as the one that averaged them.
  double slower_span_ratio = 2;
  // The rate reported is that of the longest steady span (halves within this
  // ratio of each other): long enough to average a sawtooth, steps and bursts
  // out, short enough to follow a change of rate.
  double steady_ratio = 1.5;
  // A verdict's span must have grown in both halves at rates within this of
  // each other (least squares): growth that stopped grew in one half only.
  double verdict_ratio = 4;
  // ... and have risen by at least this × the 10-90 % spread of its floor
  // points about their Theil–Sen line.
  double verdict_signal = 1;
  std::size_t history_points = 136;  // per scale: the 64-window spans stay unmerged
};

// The defaults with every time scaled to `base_window` (default 5 s): spans,
// verdict spans (120× and 480×), stop span (8×) and clear_after (720×).
LeakOptions ScaledLeakOptions(std::chrono::seconds base_window);

struct LeakEstimate {
  bool suspected = false;           // a leak verdict stands
  bool forecast = false;            // an OOM forecast stands (never together with suspected)
  bool growing = false;             // some usable span shows sustained growth now
  bool enough_evidence = false;     // a span of verdict_min_span was tested
  double rate_bytes_per_s = 0;      // of the longest steady span, else the shortest growing
  double rate_low_bytes_per_s = 0;  // Sen's ~95 % interval
  double rate_high_bytes_per_s = 0;
  double confidence = 0;                 // 1 - one-sided Mann–Kendall p-value
  double floor_bytes = 0;                // the newest floor point
  double last_bytes = 0;                 // the newest sample
  double peak_bytes = 0;                 // highest sample of the finest scale's last two windows
  std::optional<double> headroom_bytes;  // the device's free memory at its recent peak
  // At the reported rate, from the headroom; only while growing.
  std::optional<std::chrono::seconds> time_to_full;
  std::chrono::seconds window{0};  // length of the reported span (the shortest growing one)
  std::size_t points = 0;          // floor points in it
  // The span that qualified the standing verdict or forecast when it was raised.
  std::chrono::seconds evidence{0};
  double rate_mib_per_min() const { return rate_bytes_per_s * 60 / kMiB; }
};

enum class LeakChange {
  kSuspected,        // a leak verdict
  kUpdated,          // the verdict's rate or time to full moved
  kCleared,          // the verdict ended
  kForecast,         // an OOM forecast
  kForecastUpdated,  // its rate or time to full moved
  kForecastCleared,  // the growth stopped (or the verdict took over: no event then)
};

class LeakDetector {
 public:
  explicit LeakDetector(const LeakOptions& options = {});

  // One sample of used bytes (times non-decreasing). `free_bytes`: the
  // device's free memory at its recent peak (total - the highest used of the
  // last minute), when known (no forecast without it).
  // Returns the changes this sample caused (decisions are taken when a floor
  // window closes).
  std::vector<LeakChange> Observe(std::chrono::system_clock::time_point time, double bytes,
                                  std::optional<double> free_bytes = std::nullopt);
  // The same on a plain axis (seconds, or steps for a per-step series).
  std::vector<LeakChange> ObserveAt(double t, double bytes,
                                    std::optional<double> free_bytes = std::nullopt);

  const LeakEstimate& estimate() const { return estimate_; }
  const LeakOptions& options() const { return options_; }
  // Floor points held over all scales (bounded by scales × (history_points + 1)).
  std::size_t history_size() const;

 private:
  static constexpr double kEpsilon = 1e-6;  // seconds and windows compared despite rounding
  static const double kPhaseTolerance, kPhaseSamples, kPhaseKeep;
  static double Seconds(std::chrono::seconds s) { return static_cast<double>(s.count()); }

  // A tested span: what its test read (kept for every span of every scale of
  // every series, so only what the decisions and the shown estimate use).
  struct SpanResult {
    double span_s = 0;
    bool estimated = false;  // its slope was computed: the figures below are its
    bool sustained = false;
    bool steady = false;          // sustained, and its halves grew at rates within steady_ratio
    bool even = false;            // ... within verdict_ratio
    std::uint32_t points = 0;     // floor points in it
    double rate_bytes_per_s = 0;  // Theil–Sen
    double rate_low_bytes_per_s = 0;
    double rate_high_bytes_per_s = 0;
    double confidence = 0;
    double floor_bytes = 0;  // its newest floor point
    // As a LeakEstimate (the rest of it is the detector's to fill).
    LeakEstimate Estimate() const;
  };
  struct Scale {
    FloorTracker floor;
    std::vector<SpanResult> results;  // of the last closed window, shortest span first
    std::uint64_t closes = 0;         // windows closed so far
    // The last close whose results qualified a verdict, and how many closes
    // in a row up to it did.
    std::uint64_t verdict_close = 0;
    int verdict_closes = 0;
  };
  std::vector<SpanResult> TestSpans(const Scale& scale) const;
  // `r` (one of `scale`'s results) with its slope, computed now if its test
  // left it out.
  const SpanResult& WithSlope(const Scale& scale, SpanResult& r) const;
  SpanResult TestSpan(std::span<const Point> points, double window_s) const;
  bool Usable(std::size_t scale) const;
  bool StillRising(const SpanResult& r) const;
  bool FloorStillRising(const SpanResult& r) const;
  std::optional<ToothTracker::Period> PhasePeriod() const;
  void KeepRecent(double t_s, double bytes);
  bool PhaseStopped(double rate_bytes_per_s) const;
  bool FellBack() const;
  std::optional<SlopeEstimate> FlatFor(double span_s) const;
  bool GrowthGone() const;
  double StopConfirmation() const;
  std::optional<double> TimeToFull(double rate_bytes_per_s) const;
  double VerdictSpan(std::optional<double> time_to_full_s) const;
  std::vector<LeakChange> Decide(double t_s);
  bool Moved(const SpanResult& now, double t_s) const;
  bool Warrants(const SpanResult& r) const;
  bool Urgent(std::optional<double> time_to_full_s, double span_s) const;
  void Report(const SpanResult& r, double t_s);

  LeakOptions options_;
  std::vector<Scale> scales_;
  ToothTracker teeth_;
  // The samples of the last period and a stop span, from recent_begin_ on:
  // kept only while the teeth repeat at a regular period (PhasePeriod) and
  // memory grows, until keep_until_s_.
  std::vector<Point> recent_;
  std::size_t recent_begin_ = 0;
  double keep_until_s_ = 0;
  std::optional<double> origin_;
  std::optional<double> last_t_;
  std::vector<double> intervals_s_;  // the last few sample intervals
  double interval_s_ = 0;            // their median
  std::optional<double> free_bytes_;
  double reported_full_at_s_ = 0;  // predicted time of full when last reported (0: none)
  double reported_rate_ = 0;
  double reported_span_s_ = 0;  // the span that gave reported_rate_
  int moved_ = 0;               // decisions in a row on which the prediction moved
  bool stopped_ = false;        // the growth seemed to stop on every decision since ...
  double stopped_since_s_ = 0;  // ... this one
  double threshold_ = 0;        // of the tooth tracker, as of the newest sample
  // The floor of the finest usable scale when the standing forecast was raised.
  std::size_t raised_scale_ = 0;
  double raised_floor_ = 0;
  LeakEstimate estimate_;
};

}  // namespace gpuwatch::leaks
