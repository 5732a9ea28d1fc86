#include "analysis/sweep/sweep_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "gpuwatch/units.h"

namespace gpuwatch::sweep {
namespace {

using Matrix = std::array<std::array<double, 3>, 3>;
// The quadratic term must add this share of the memory at the largest value
// to count: a significant but negligible curvature is still "linear".
constexpr double kMinCurvatureShare = 0.01;

// Inverts the leading k x k block by Gauss-Jordan with partial pivoting;
// false when singular.
bool Invert(Matrix m, int k, Matrix& inv) {
  inv = Matrix{};
  for (int i = 0; i < k; ++i) inv[i][i] = 1;
  for (int col = 0; col < k; ++col) {
    int pivot = col;
    for (int r = col + 1; r < k; ++r) {
      if (std::abs(m[r][col]) > std::abs(m[pivot][col])) pivot = r;
    }
    if (std::abs(m[pivot][col]) < 1e-12) return false;
    std::swap(m[pivot], m[col]);
    std::swap(inv[pivot], inv[col]);
    const double p = m[col][col];
    for (int j = 0; j < k; ++j) {
      m[col][j] /= p;
      inv[col][j] /= p;
    }
    for (int r = 0; r < k; ++r) {
      if (r == col) continue;
      const double f = m[r][col];
      for (int j = 0; j < k; ++j) {
        m[r][j] -= f * m[col][j];
        inv[r][j] -= f * inv[col][j];
      }
    }
  }
  return true;
}

struct LeastSquares {
  std::array<double, 3> coef{};  // in u = v / scale
  Matrix cov{};                  // (X'X)^-1
  double sse = 0;
};

// Fits y on 1, u (and u^2 when k = 3).
std::optional<LeastSquares> Solve(const std::vector<MemoryPoint>& pts, double scale, int k) {
  Matrix xtx{};
  std::array<double, 3> xty{};
  for (const auto& p : pts) {
    const double u = p.value / scale;
    const std::array<double, 3> row{1, u, u * u};
    for (int i = 0; i < k; ++i) {
      xty[i] += row[i] * p.bytes;
      for (int j = 0; j < k; ++j) xtx[i][j] += row[i] * row[j];
    }
  }
  LeastSquares ls;
  if (!Invert(xtx, k, ls.cov)) return std::nullopt;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) ls.coef[i] += ls.cov[i][j] * xty[j];
  }
  for (const auto& p : pts) {
    const double u = p.value / scale;
    const double r = p.bytes - (ls.coef[0] + ls.coef[1] * u + ls.coef[2] * u * u);
    ls.sse += r * r;
  }
  return ls;
}

}  // namespace

double StudentT975(int dof) {
  static constexpr std::array<double, 30> kT{
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < 1) return INFINITY;
  if (dof <= 30) return kT[static_cast<std::size_t>(dof - 1)];
  if (dof <= 60) return 2.000;
  if (dof <= 120) return 1.980;
  return 1.960;
}

Result<MemoryFit> FitMemory(const std::vector<MemoryPoint>& points) {
  std::vector<MemoryPoint> pts;
  std::set<double> values;
  for (const auto& p : points) {
    if (p.value > 0 && p.bytes > 0 && std::isfinite(p.bytes)) {
      pts.push_back(p);
      values.insert(p.value);
    }
  }
  if (values.size() < 2) {
    return Status::InvalidArgument(
        fmt::format("a memory fit needs runs at 2 or more values with memory measured; there {} {}",
                    values.size() == 1 ? "is" : "are", values.size()));
  }
  MemoryFit fit;
  fit.points = static_cast<int>(pts.size());
  fit.distinct_values = static_cast<int>(values.size());
  fit.scale = *values.rbegin();
  const int n = fit.points;
  double mean = 0;
  for (const auto& p : pts) mean += p.bytes / n;
  double sst = 0;
  for (const auto& p : pts) sst += (p.bytes - mean) * (p.bytes - mean);
  auto lin = Solve(pts, fit.scale, 2);
  if (!lin) return Status::InvalidArgument("the values are too close together to fit a line");
  // Memory is read in whole bytes or MiB: a residual this small is no residual.
  const double exact = std::max(1.0, 1e-9 * mean) * std::max(1.0, 1e-9 * mean) * n;
  const auto r2 = [&](double sse) { return sst > 0 ? 1 - sse / sst : 1.0; };
  fit.r2_linear = r2(lin->sse);
  LeastSquares chosen = *lin;
  int k = 2;
  bool slower = false;  // significantly concave, predicted with the line
  std::string evidence;
  if (fit.distinct_values >= 4) {
    if (auto quad = Solve(pts, fit.scale, 3)) {
      fit.r2_quadratic = r2(quad->sse);
      const int dof_q = n - 3;
      const double curvature = std::abs(quad->coef[2]);  // at u = 1: the largest value
      const double at_max = std::abs(quad->coef[0] + quad->coef[1] + quad->coef[2]);
      const bool large = at_max > 0 && curvature >= kMinCurvatureShare * at_max;
      bool significant = false;
      if (lin->sse > exact) {
        fit.f_critical = StudentT975(dof_q) * StudentT975(dof_q);
        if (quad->sse <= exact) {
          significant = true;
          evidence = "the quadratic fits exactly, the line does not";
        } else {
          fit.f_statistic = (lin->sse - quad->sse) / (quad->sse / dof_q);
          significant = *fit.f_statistic > *fit.f_critical;
          evidence = fmt::format("F = {:.1f} {} {:.1f} (5 % level, 1 and {} dof)", *fit.f_statistic,
                                 significant ? ">" : "<=", *fit.f_critical, dof_q);
        }
        if (significant && !large) {
          evidence +=
              fmt::format(", but the quadratic term is {:.2f} % of the memory at {} (< 1 %)",
                          100 * curvature / at_max, fit.scale);
        }
      } else {
        evidence = "the line fits exactly";
      }
      if (significant && large && quad->coef[2] > 0) {
        chosen = *quad;
        k = 3;
      } else if (significant && large) {
        // Concave: memory would stop growing, and then fall, past the values
        // tried (a fixed workspace amortised at small batches). The line
        // predicts more memory beyond them: the cautious side, where an
        // out-of-memory costs a crashed job and a smaller batch only speed.
        slower = true;
        evidence += "; predicted with the line, which is the cautious side beyond the values tried";
      }
    }
  } else {
    evidence =
        fmt::format("{} values: curvature needs 4 or more to be tested", fit.distinct_values);
  }
  fit.model = k == 3 ? MemoryFit::Model::kQuadratic : MemoryFit::Model::kLinear;
  fit.a = chosen.coef[0];
  fit.b = chosen.coef[1] / fit.scale;
  fit.c = k == 3 ? chosen.coef[2] / (fit.scale * fit.scale) : 0;
  fit.unscaled_cov = chosen.cov;
  fit.dof = n - k;
  if (fit.dof > 0) fit.residual_bytes = std::sqrt(chosen.sse / fit.dof);
  if (slower) {
    fit.verdict = "grows slower than linear";
  } else if (k == 2) {
    fit.verdict = "linear";
  } else {
    fit.verdict = fit.c > 0 ? "grows faster than linear" : "grows slower than linear";
  }
  const std::string model =
      k == 3 ? fmt::format("{} + {:.2f} MiB*bs + {:.4f} MiB*bs^2", GibText(fit.a),
                           fit.b / 1048576.0, fit.c / 1048576.0)
             : fmt::format("{} + {:.2f} MiB*bs", GibText(fit.a), fit.b / 1048576.0);
  fit.evidence = fmt::format(
      "{}; R^2 {:.4f} linear{}; {}", model, fit.r2_linear,
      fit.r2_quadratic ? fmt::format(", {:.4f} quadratic", *fit.r2_quadratic) : "", evidence);
  return fit;
}

double PredictBytes(const MemoryFit& fit, double value) {
  return fit.a + fit.b * value + fit.c * value * value;
}

std::optional<double> PredictionHalfWidth(const MemoryFit& fit, double value) {
  if (!fit.residual_bytes) return std::nullopt;
  const int k = fit.model == MemoryFit::Model::kQuadratic ? 3 : 2;
  const double u = value / fit.scale;
  const std::array<double, 3> x{1, u, u * u};
  double h = 0;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) h += x[i] * fit.unscaled_cov[i][j] * x[j];
  }
  return StudentT975(fit.dof) * *fit.residual_bytes * std::sqrt(1 + std::max(0.0, h));
}

namespace {

// The largest v in [1, limit] with bytes(v) <= budget, for bytes increasing
// in v; none when even 1 does not fit.
template <typename F>
std::optional<long> LargestUnder(const F& bytes, double budget, long limit) {
  if (bytes(1.0) > budget) return std::nullopt;
  long lo = 1, hi = limit;
  if (bytes(static_cast<double>(hi)) <= budget) return hi;
  while (hi - lo > 1) {
    const long mid = lo + (hi - lo) / 2;
    (bytes(static_cast<double>(mid)) <= budget ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

Capacity LargestFitting(const MemoryFit& fit, double free_bytes, double margin, long limit) {
  Capacity cap;
  cap.budget_bytes = free_bytes * (1 - margin);
  // A curve that bends down is followed only while it rises.
  if (fit.c < 0 && fit.b > 0) limit = std::min(limit, static_cast<long>(-fit.b / (2 * fit.c)));
  if (fit.b <= 0 && fit.c <= 0) {
    cap.note = "memory does not grow with the value: the fit sets no limit";
    return cap;
  }
  const auto mid = [&](double v) { return PredictBytes(fit, v); };
  cap.largest = LargestUnder(mid, cap.budget_bytes, limit);
  if (!cap.largest) {
    cap.note = fmt::format("even 1 is predicted to need {}, over the budget of {}",
                           GibText(PredictBytes(fit, 1)), GibText(cap.budget_bytes));
    return cap;
  }
  if (!fit.residual_bytes) {
    cap.note = "no interval: the fit has no residual degrees of freedom (run 3 or more values)";
    return cap;
  }
  const auto upper = [&](double v) { return mid(v) + *PredictionHalfWidth(fit, v); };
  const auto lower = [&](double v) { return mid(v) - *PredictionHalfWidth(fit, v); };
  cap.low = LargestUnder(upper, cap.budget_bytes, limit).value_or(0);
  cap.high = LargestUnder(lower, cap.budget_bytes, limit);
  return cap;
}

std::string GibText(double bytes) { return fmt::format("{:.2f} GiB", bytes / kBytesPerGiB); }

}  // namespace gpuwatch::sweep
