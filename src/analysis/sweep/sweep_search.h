// Where the out-of-memory boundary of a sweep lies and which value to try
// next to find it: the fit's prediction first, then confirmed around it,
// bisection as the fallback; and what doubling + bisection (Lightning's
// BatchSizeFinder) would have spent on the same boundary. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace gpuwatch::sweep {

enum class RunVerdict { kFits, kOom, kFailed };

struct Trial {
  long value = 0;
  RunVerdict verdict = RunVerdict::kFits;
};

// Whether a boundary between `largest_fit` and `smallest_oom` is known well
// enough: to 1 % of the batch (at least to 1). A batch a few per cent under
// the edge is what anyone deploys; the last runs of an exact bisection buy
// nothing but time. Doubling + bisection is counted to the same resolution.
bool Resolved(long largest_fit, long smallest_oom);

struct Boundary {
  std::optional<long> largest_fit;  // below smallest_oom
  std::optional<long> smallest_oom;
  // Both known and Resolved: the boundary is found.
  bool found() const {
    return largest_fit && smallest_oom && Resolved(*largest_fit, *smallest_oom);
  }
};

Boundary BoundaryOf(const std::vector<Trial>& trials);

// The next value for --search, none when the boundary is found or cannot be
// (1 does not fit, or `max_value` fits). `predicted` is the fit's largest
// value under all free memory, when there is a fit; the first `given` trials
// are the user's values, the rest the search's own. Before a first
// out-of-memory: the prediction, but at least a step past the largest fit
// that doubles with every search run that still fit (1 %, 3 %, 7 % ... of
// it), so a prediction creeping up behind its own fits reaches a ceiling in
// a few runs. After it: the prediction once, if it lies inside the bracket
// (or just under the failure when it is at or above it), then bisection.
std::optional<long> NextSearchValue(const std::vector<Trial>& trials, std::optional<long> predicted,
                                    long max_value, std::size_t given = 0);

// The default sweep's third and fourth values, placed by the fit of the runs
// before them: an eighth, then a quarter of `predicted` (the fit's largest
// value under all free memory), but at least twice `previous`; rounded down
// to a multiple of 8 from 64 on, and at most `max_value`. `placed_before`
// counts the placed runs already made (0 or 1). Runs at 8 and 16 alone
// extrapolate some 200-fold to a large GPU's edge, and what a job holds at a
// tiny batch (a fixed cuDNN workspace, a larger share of allocator cache)
// bends that line; runs spread towards the edge leave less to extrapolate.
long PlacedValue(long previous, std::optional<long> predicted, int placed_before, long max_value);

// The next value for --until-oom: double the largest that fit, none after
// the first out-of-memory (or past `max_value`).
std::optional<long> NextUntilOom(const std::vector<Trial>& trials, long max_value);

// Runs doubling from `start` until the first failure, then bisection until
// the boundary is found, would take when everything up to `largest_fit`
// fits (halving first when `start` itself does not).
int DoublingBisectionTrials(long start, long largest_fit);

}  // namespace gpuwatch::sweep
