// Where the out-of-memory boundary of a sweep lies and which value to try
// next to find it: the fit's prediction first, then confirmed around it,
// bisection as the fallback; and what doubling + bisection (Lightning's
// BatchSizeFinder) would have spent on the same boundary. Pure.
#pragma once

#include <optional>
#include <vector>

namespace gpuwatch::sweep {

enum class RunVerdict { kFits, kOom, kFailed };

struct Trial {
  long value = 0;
  RunVerdict verdict = RunVerdict::kFits;
};

struct Boundary {
  std::optional<long> largest_fit;  // below smallest_oom
  std::optional<long> smallest_oom;
  // Both known and next to each other: the boundary is found.
  bool found() const { return largest_fit && smallest_oom && *smallest_oom == *largest_fit + 1; }
};

Boundary BoundaryOf(const std::vector<Trial>& trials);

// The next value for --search, none when the boundary is found or cannot be
// (1 does not fit, or `max_value` fits). `predicted` is the fit's largest
// value under all free memory, when there is a fit.
std::optional<long> NextSearchValue(const std::vector<Trial>& trials, std::optional<long> predicted,
                                    long max_value);

// The next value for --until-oom: double the largest that fit, none after
// the first out-of-memory (or past `max_value`).
std::optional<long> NextUntilOom(const std::vector<Trial>& trials, long max_value);

// Runs doubling from `start` until the first failure, then bisection until
// the boundary is found, would take when everything up to `largest_fit`
// fits (halving first when `start` itself does not).
int DoublingBisectionTrials(long start, long largest_fit);

}  // namespace gpuwatch::sweep
