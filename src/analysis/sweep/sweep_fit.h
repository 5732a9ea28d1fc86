// The memory model of a sweep: memory = a + b*v by least squares, or
// a + b*v + c*v^2 when the quadratic term is significant, large and curves up
// (a concave one is said in the verdict but predicted with the line, the
// cautious side; docs/sweep.md states the criterion), and the largest value
// that fits a memory budget with an interval from the fit's residuals. Pure.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "gpuwatch/status.h"

namespace gpuwatch::sweep {

struct MemoryPoint {
  double value = 0;  // the swept value (batch size)
  double bytes = 0;  // the memory measured at it
};

struct MemoryFit {
  enum class Model { kLinear, kQuadratic };
  Model model = Model::kLinear;
  double a = 0;  // bytes
  double b = 0;  // bytes per unit of the value
  double c = 0;  // bytes per unit squared (quadratic only)
  int points = 0;
  int distinct_values = 0;
  double r2_linear = 0;
  std::optional<double> r2_quadratic;  // with at least 4 distinct values
  // The partial F statistic of the quadratic term and its 5 % critical value.
  std::optional<double> f_statistic;
  std::optional<double> f_critical;
  // Residual standard error of the chosen model, bytes; none without degrees
  // of freedom left (2 values for a line).
  std::optional<double> residual_bytes;
  // "linear", "grows faster than linear" or "grows slower than linear".
  std::string verdict;
  std::string evidence;  // why, in words and numbers
  // (X'X)^-1 of the chosen model in the scaled value u = v / scale.
  std::array<std::array<double, 3>, 3> unscaled_cov{};
  double scale = 1;
  int dof = 0;
};

// Needs at least 2 distinct values with positive bytes; InvalidArgument
// otherwise, saying how many there are.
Result<MemoryFit> FitMemory(const std::vector<MemoryPoint>& points);

double PredictBytes(const MemoryFit& fit, double value);
// Half-width of the 95 % prediction interval of one run at `value`; none
// without residual degrees of freedom.
std::optional<double> PredictionHalfWidth(const MemoryFit& fit, double value);

struct Capacity {
  double budget_bytes = 0;        // free * (1 - margin)
  std::optional<long> largest;    // the fit's largest value under the budget
  std::optional<long> low, high;  // its 95 % interval (upper / lower prediction)
  std::string note;               // when there is no answer, or no interval
};

// The largest positive integer value whose predicted memory stays under
// free_bytes * (1 - margin), searched up to `limit`.
Capacity LargestFitting(const MemoryFit& fit, double free_bytes, double margin,
                        long limit = 1L << 24);

// The two-sided 95 % quantile of Student's t with `dof` degrees of freedom.
double StudentT975(int dof);

// "12.34 GiB".
std::string GibText(double bytes);

}  // namespace gpuwatch::sweep
