#include "analysis/sweep/sweep_search.h"

#include <algorithm>

namespace gpuwatch::sweep {

bool Resolved(long largest_fit, long smallest_oom) {
  return smallest_oom - largest_fit <= std::max(1L, largest_fit / 100);
}

Boundary BoundaryOf(const std::vector<Trial>& trials) {
  Boundary b;
  for (const auto& t : trials) {
    if (t.verdict == RunVerdict::kOom && (!b.smallest_oom || t.value < *b.smallest_oom)) {
      b.smallest_oom = t.value;
    }
  }
  for (const auto& t : trials) {
    if (t.verdict != RunVerdict::kFits) continue;
    if (b.smallest_oom && t.value >= *b.smallest_oom) continue;  // noise above a failure
    if (!b.largest_fit || t.value > *b.largest_fit) b.largest_fit = t.value;
  }
  return b;
}

std::optional<long> NextSearchValue(const std::vector<Trial>& trials, std::optional<long> predicted,
                                    long max_value, std::size_t given) {
  const Boundary b = BoundaryOf(trials);
  if (b.found()) return std::nullopt;
  const auto tried = [&](long v) {
    return std::any_of(trials.begin(), trials.end(), [v](const Trial& t) { return t.value == v; });
  };
  if (!b.smallest_oom) {                      // no ceiling yet: the prediction, else doubling
    if (!b.largest_fit) return std::nullopt;  // nothing ran
    const long lo = *b.largest_fit;
    if (lo >= max_value) return std::nullopt;
    if (!predicted) return std::min(lo * 2, max_value);
    const auto searched_fits =
        std::count_if(trials.begin() + static_cast<std::ptrdiff_t>(std::min(given, trials.size())),
                      trials.end(), [](const Trial& t) { return t.verdict == RunVerdict::kFits; });
    const long step = std::max(
        1L, static_cast<long>(static_cast<double>(lo) * 0.01 *
                              static_cast<double>((1L << std::min<long>(searched_fits, 20)) - 1)));
    long next = std::max(*predicted, lo + step);
    if (tried(next)) next = lo + 1;  // the prediction says lo is the boundary: confirm it
    return std::min(next, max_value);
  }
  if (!b.largest_fit) {  // no floor: halve towards 1
    if (*b.smallest_oom <= 1) return std::nullopt;
    return std::max(1L, *b.smallest_oom / 2);
  }
  const long lo = *b.largest_fit, hi = *b.smallest_oom;
  // The prediction gets one trial once a ceiling is known; then bisection
  // guarantees the end.
  const auto first_oom = std::find_if(trials.begin(), trials.end(),
                                      [](const Trial& t) { return t.verdict == RunVerdict::kOom; });
  const auto since_ceiling = std::distance(first_oom, trials.end()) - 1;
  const long guess = predicted ? std::clamp(*predicted, lo + 1, hi - 1) : 0;
  if (!predicted || since_ceiling >= 1 || tried(guess)) return lo + (hi - lo) / 2;
  return guess;
}

long PlacedValue(long previous, std::optional<long> predicted, int placed_before, long max_value) {
  long v = previous * 2;
  if (predicted) v = std::max(v, *predicted / (placed_before == 0 ? 8 : 4));
  if (v >= 64) v = v / 8 * 8;
  return std::max(1L, std::min(v, max_value));
}

std::optional<long> NextUntilOom(const std::vector<Trial>& trials, long max_value) {
  const Boundary b = BoundaryOf(trials);
  if (b.smallest_oom || !b.largest_fit || *b.largest_fit >= max_value) return std::nullopt;
  return std::min(*b.largest_fit * 2, max_value);
}

int DoublingBisectionTrials(long start, long largest_fit) {
  const auto fits = [largest_fit](long v) { return v <= largest_fit; };
  int trials = 0;
  long lo = 0, hi = 0, v = std::max(1L, start);
  if (fits(v)) {
    while (fits(v)) {
      ++trials;
      lo = v;
      v *= 2;
    }
    ++trials;
    hi = v;
  } else {
    while (v > 1 && !fits(v)) {
      ++trials;
      hi = v;
      v /= 2;
    }
    ++trials;  // the first that fits (or 1, which does not)
    if (!fits(v)) return trials;
    lo = v;
  }
  while (!Resolved(lo, hi)) {
    const long mid = lo + (hi - lo) / 2;
    ++trials;
    (fits(mid) ? lo : hi) = mid;
  }
  return trials;
}

}  // namespace gpuwatch::sweep
