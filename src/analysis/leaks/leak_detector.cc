#include "analysis/leaks/leak_detector.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "analysis/leaks/robust_stats.h"

namespace gpuwatch::leaks {
namespace {

constexpr std::size_t kIntervalsKept = 15;
constexpr double kMinToothThreshold = 64 * kMiB;

// The floor's widest window: the base window, doubled for each scale above the
// first.
double WidestWindowSeconds(const LeakOptions& options) {
  double window_s = std::max(1.0, static_cast<double>(options.base_window.count()));
  for (int i = 1; i < options.scales; ++i) window_s *= 2;
  return window_s;
}

}  // namespace

LeakOptions ScaledLeakOptions(std::chrono::seconds base_window) {
  LeakOptions o;
  o.base_window = base_window;
  o.verdict_min_span = base_window * 120;
  o.verdict_max_span = base_window * 360;
  o.stop_span = base_window * 8;
  o.clear_after = base_window * 720;
  o.forecast_horizon = base_window * 3600;
  return o;
}

LeakDetector::LeakDetector(const LeakOptions& options)
    : options_(options), teeth_(8, 2 * WidestWindowSeconds(options)) {
  const int n = std::max(1, options_.scales);
  double window_s = std::max(1.0, Seconds(options_.base_window));
  for (int i = 0; i < n; ++i, window_s *= 2) {
    scales_.push_back(Scale{FloorTracker(window_s, options_.history_points), {}});
  }
}

LeakEstimate LeakDetector::SpanResult::Estimate() const {
  LeakEstimate e;
  if (!estimated) return e;
  e.rate_bytes_per_s = rate_bytes_per_s;
  e.rate_low_bytes_per_s = rate_low_bytes_per_s;
  e.rate_high_bytes_per_s = rate_high_bytes_per_s;
  e.confidence = confidence;
  e.window = std::chrono::seconds(static_cast<long long>(span_s));
  e.points = points;
  e.floor_bytes = floor_bytes;
  return e;
}

std::size_t LeakDetector::history_size() const {
  std::size_t n = 0;
  for (const Scale& s : scales_) n += s.floor.points().size();
  return n;
}

std::vector<LeakChange> LeakDetector::Observe(std::chrono::system_clock::time_point time,
                                              double bytes, std::optional<double> free_bytes) {
  return ObserveAt(std::chrono::duration<double>(time.time_since_epoch()).count(), bytes,
                   free_bytes);
}

std::vector<LeakChange> LeakDetector::ObserveAt(double t, double bytes,
                                                std::optional<double> free_bytes) {
  if (!origin_) origin_ = t;
  const double t_s = t - *origin_;
  if (last_t_ && t_s > *last_t_) {
    if (intervals_s_.size() == kIntervalsKept) intervals_s_.erase(intervals_s_.begin());
    intervals_s_.push_back(t_s - *last_t_);
    interval_s_ = Median(intervals_s_);
  }
  last_t_ = t_s;
  free_bytes_ = free_bytes;
  // A tooth matters when it could look urgent: a rise of a share of the headroom.
  threshold_ = std::max(kMinToothThreshold,
                        free_bytes ? *free_bytes / (2 * options_.urgency) : 0.02 * bytes);
  teeth_.Add(t_s, bytes, threshold_);
  KeepRecent(t_s, bytes);

  bool closed = false;
  for (std::size_t i = 0; i < scales_.size(); ++i) {
    Scale& s = scales_[i];
    if (!s.floor.Add(t_s, bytes)) continue;
    closed = true;
    ++s.closes;
    // A scale not usable now is tested when it closes again usable.
    if (Usable(i)) {
      s.results = TestSpans(s);
    } else {
      s.results.clear();
    }
  }
  estimate_.last_bytes = bytes;
  for (std::size_t i = 0; i < scales_.size(); ++i) {
    if (!Usable(i)) continue;
    estimate_.peak_bytes = scales_[i].floor.peak().value_or(bytes);
    break;
  }
  estimate_.headroom_bytes = free_bytes;
  if (!closed) return {};
  return Decide(t_s);
}

bool LeakDetector::Usable(std::size_t i) const {
  if (i + 1 == scales_.size()) return true;  // the coarsest always is
  const double window_s = scales_[i].floor.window_s();
  if (window_s + kEpsilon < options_.tooth_margin * teeth_.longest_s()) return false;
  return window_s + kEpsilon >= options_.min_samples_per_window * interval_s_;
}

std::optional<double> LeakDetector::TimeToFull(double rate_bytes_per_s) const {
  if (!estimate_.headroom_bytes || !(rate_bytes_per_s > 0)) return std::nullopt;
  return std::max(0.0, *estimate_.headroom_bytes) / rate_bytes_per_s;
}

double LeakDetector::VerdictSpan(std::optional<double> time_to_full_s) const {
  const double lo = Seconds(options_.verdict_min_span);
  const double hi = std::max(lo, Seconds(options_.verdict_max_span));
  if (!time_to_full_s) return hi;
  return std::clamp(*time_to_full_s / options_.verdict_urgency, lo, hi);
}

// The prediction moved by more than update_share, and the rate reported last
// is outside the ~95 % interval of the rate now: a move within the noise of
// the estimate is not news.
bool LeakDetector::Moved(const SpanResult& now, double t_s) const {
  if (reported_rate_ >= now.rate_low_bytes_per_s && reported_rate_ <= now.rate_high_bytes_per_s) {
    return false;
  }
  const auto t = TimeToFull(now.rate_bytes_per_s);
  if (t && reported_full_at_s_ > 0) {
    return std::fabs(t_s + *t - reported_full_at_s_) > options_.update_share * *t;
  }
  return std::fabs(now.rate_bytes_per_s - reported_rate_) >
         options_.update_share * std::fabs(reported_rate_);
}

// An update needs the evidence a first report of its rate would: a
// forecast's (T <= urgency × span, within the horizon) or a verdict's span.
// News that memory runs out sooner comes as fast as the danger; news that it
// runs out later waits for as much evidence as a verdict at that rate (a
// shorter span of a bursty or aliased floor reads the beat, not the rate).
// A slower rate also needs a span slower_span_ratio × as long as the one that
// gave the rate it replaces: a calm between bursts, or an aliased sawtooth's
// beat, reads slow over a span about as long as the one that averaged them
// (leak_bursty: 14 MiB/min over 36 minutes replaced 68 over 35, the leak's
// average being 45).
bool LeakDetector::Warrants(const SpanResult& r) const {
  if (r.rate_bytes_per_s < reported_rate_ &&
      r.span_s + kEpsilon < options_.slower_span_ratio * reported_span_s_) {
    return false;
  }
  const auto t = TimeToFull(r.rate_bytes_per_s);
  return Urgent(t, r.span_s) || r.span_s + kEpsilon >= VerdictSpan(t);
}

// A time to full short enough, for a span this long, to be forecast.
bool LeakDetector::Urgent(std::optional<double> time_to_full_s, double span_s) const {
  return time_to_full_s && *time_to_full_s <= options_.urgency * span_s &&
         *time_to_full_s <= Seconds(options_.forecast_horizon);
}

void LeakDetector::Report(const SpanResult& r, double t_s) {
  reported_rate_ = r.rate_bytes_per_s;
  reported_span_s_ = r.span_s;
  const auto t = TimeToFull(reported_rate_);
  reported_full_at_s_ = t ? t_s + *t : 0;
}

std::vector<LeakChange> LeakDetector::Decide(double t_s) {
  // Over the usable scales: the shortest span with sustained growth (it says
  // whether memory grows now), the longest steady one (the rate), whether one
  // qualifies for a forecast or a verdict, and the evidence span of the
  // shortest that does.
  const SpanResult* growth = nullptr;
  SpanResult* fallback = nullptr;  // the last span of the last usable scale with any
  std::size_t fallback_scale = 0;
  std::vector<const SpanResult*> steady;   // steady spans fit to give the rate
  const SpanResult* any_steady = nullptr;  // the longest steady span of all
  std::optional<double> forecast_span_s, verdict_span_s;
  bool enough = false;
  bool verdict_held = false;  // a scale qualified a verdict on two closes in a row
  for (std::size_t i = 0; i < scales_.size(); ++i) {
    if (!Usable(i)) continue;
    bool qualifies = false;
    // The rate comes from windows that hold several teeth (their floors hardly
    // jitter) and from results tested recently enough to follow a change.
    const FloorTracker& f = scales_[i].floor;
    const bool smooth = f.window_s() + kEpsilon >= 4 * teeth_.longest_s();
    const double age_s = f.points().empty() ? 0 : t_s - f.points().back().t_s - f.window_s();
    for (SpanResult& r : scales_[i].results) {
      enough = enough || r.span_s + kEpsilon >= Seconds(options_.verdict_min_span);
      fallback = &r;
      fallback_scale = i;
      if (!r.sustained) continue;
      if (growth == nullptr || r.span_s < growth->span_s - kEpsilon) growth = &r;
      const bool fresh = age_s <= std::max(Seconds(options_.stop_span), r.span_s / 16);
      if (r.steady && smooth && fresh) steady.push_back(&r);
      if (r.steady && (any_steady == nullptr || r.span_s > any_steady->span_s + kEpsilon)) {
        any_steady = &r;
      }
      const auto t = TimeToFull(r.rate_bytes_per_s);
      // A forecast needs growth at one rate, not a step on a slow rise.
      if (r.steady && Urgent(t, r.span_s)) {
        forecast_span_s = std::min(forecast_span_s.value_or(r.span_s), r.span_s);
      }
      // A verdict needs growth all through its span: halves within
      // verdict_ratio (a warm-up or steps that stopped grew in one half only).
      if (r.even && r.span_s + kEpsilon >= VerdictSpan(t)) {
        verdict_span_s = std::min(verdict_span_s.value_or(r.span_s), r.span_s);
        qualifies = true;
      }
    }
    Scale& s = scales_[i];
    if (qualifies && s.verdict_close != s.closes) {
      s.verdict_closes = s.verdict_close + 1 == s.closes ? s.verdict_closes + 1 : 1;
      s.verdict_close = s.closes;
    }
    verdict_held = verdict_held || (qualifies && s.verdict_closes >= 2);
  }
  // The rate: the longest steady span that agrees (within steady_ratio) with
  // the shortest ones (the median of the three shortest: how memory grows
  // now; with fewer than three, the longest); else the longest steady span
  // of any scale; else the shortest that grows (no update is made from it).
  std::sort(steady.begin(), steady.end(),
            [](const SpanResult* a, const SpanResult* b) { return a->span_s < b->span_s; });
  const SpanResult* rate = !steady.empty() ? steady.back() : any_steady ? any_steady : growth;
  if (steady.size() >= 3) {
    const double now = Median(
        {steady[0]->rate_bytes_per_s, steady[1]->rate_bytes_per_s, steady[2]->rate_bytes_per_s});
    for (const SpanResult* r : steady) {
      const double v = r->rate_bytes_per_s;
      if (v <= options_.steady_ratio * now && now <= options_.steady_ratio * v) rate = r;
    }
  }

  LeakEstimate next;
  if (rate != nullptr) {
    next = rate->Estimate();
  } else if (fallback != nullptr) {
    next = WithSlope(scales_[fallback_scale], *fallback).Estimate();
  }
  next.suspected = estimate_.suspected;
  next.forecast = estimate_.forecast;
  next.evidence = estimate_.evidence;
  next.enough_evidence = enough;
  next.last_bytes = estimate_.last_bytes;
  next.peak_bytes = estimate_.peak_bytes;
  next.headroom_bytes = estimate_.headroom_bytes;
  // A stop (no span grows, or the newest floor is flat) is taken for real on
  // the third decision in a row that sees it; until then the last rate holds.
  const bool rising = growth != nullptr && StillRising(*rate);
  // No usable scale has tested a span (the teeth just ruled the finer ones
  // out): that is no evidence of a stop either.
  if (rising) {
    stopped_ = false;
  } else if (fallback != nullptr && !stopped_) {
    stopped_ = true;
    stopped_since_s_ = t_s;
  }
  const bool stop_confirmed = stopped_ && t_s - stopped_since_s_ + kEpsilon >= StopConfirmation();
  next.growing = rising || (estimate_.growing && !stop_confirmed);
  if (next.growing && !rising) {
    next.rate_bytes_per_s = estimate_.rate_bytes_per_s;
    next.rate_low_bytes_per_s = estimate_.rate_low_bytes_per_s;
    next.rate_high_bytes_per_s = estimate_.rate_high_bytes_per_s;
  }
  const auto to_full = next.growing ? TimeToFull(next.rate_bytes_per_s) : std::nullopt;
  if (to_full) next.time_to_full = std::chrono::seconds(static_cast<long long>(*to_full));
  if (!growth && !fallback) next.floor_bytes = scales_.front().floor.points().back().value;
  estimate_ = next;

  std::vector<LeakChange> changes;
  // A standing verdict or forecast is re-reported when the predicted time of
  // full has moved on two decisions in a row (one is noise).
  auto update = [&](LeakChange change) {
    moved_ =
        rate && rate->steady && rising && Warrants(*rate) && Moved(*rate, t_s) ? moved_ + 1 : 0;
    if (moved_ < 2) return;
    moved_ = 0;
    Report(*rate, t_s);
    changes.push_back(change);
  };
  if (estimate_.suspected) {
    if (next.growing) {
      update(LeakChange::kUpdated);
    } else if (!growth && GrowthGone()) {
      estimate_.suspected = false;
      changes.push_back(LeakChange::kCleared);
    }
    return changes;
  }
  // A verdict needs growth now: the finest floor still rising, or its span
  // qualifying again when its scale closed one more window. Between the
  // steps of a stepwise leak the finest floor is flat, and waiting for a
  // step to land just as a span qualifies took one in six staircases past
  // their budget; a span that passes on noise alone rarely passes twice.
  if (verdict_span_s && (rising || verdict_held)) {
    estimate_.suspected = true;
    estimate_.forecast = false;  // the verdict takes over
    estimate_.evidence = std::chrono::seconds(static_cast<long long>(*verdict_span_s));
    Report(*rate, t_s);
    changes.push_back(LeakChange::kSuspected);
    return changes;
  }
  if (estimate_.forecast) {
    // It stands while the growth goes on and stays within the horizon; it is
    // cleared on evidence only, not while no usable scale has tested a span
    // yet (the teeth just ruled the finer ones out).
    // Memory falling back below where the forecast was raised, by a tooth
    // that rules that scale out, ends it at once (the teeth may now rule out
    // every scale with results).
    const bool holds = next.growing && to_full && *to_full <= Seconds(options_.forecast_horizon);
    if ((!holds && (fallback != nullptr || stop_confirmed)) || FellBack()) {
      estimate_.forecast = false;
      moved_ = 0;
      changes.push_back(LeakChange::kForecastCleared);
    } else if (holds) {
      update(LeakChange::kForecastUpdated);
    }
  } else if (forecast_span_s && rising) {
    estimate_.forecast = true;
    estimate_.evidence = std::chrono::seconds(static_cast<long long>(*forecast_span_s));
    Report(*rate, t_s);
    for (std::size_t i = 0; i < scales_.size(); ++i) {
      if (!Usable(i) || scales_[i].floor.points().empty()) continue;
      raised_scale_ = i;
      raised_floor_ = scales_[i].floor.points().back().value;
      break;
    }
    changes.push_back(LeakChange::kForecast);
  }
  return changes;
}

}  // namespace gpuwatch::leaks
