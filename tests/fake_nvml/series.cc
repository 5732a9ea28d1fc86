#include "series.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gpuwatch::fake_nvml {
namespace {

std::uint64_t Mix(std::uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double Fraction(double x) { return x - std::floor(x); }

}  // namespace

std::uint64_t HashString(const char* text, std::uint64_t seed) {
  std::uint64_t h = 0xcbf29ce484222325ull ^ Mix(seed);
  for (const char* p = text; *p != '\0'; ++p) {
    h ^= static_cast<unsigned char>(*p);
    h *= 0x100000001b3ull;
  }
  return h;
}

double Noise(std::uint64_t seed, double t) {
  const auto tick = static_cast<std::int64_t>(std::llround(t * 10.0));
  const std::uint64_t h = Mix(seed ^ Mix(static_cast<std::uint64_t>(tick)));
  return static_cast<double>(h >> 11) / static_cast<double>(1ull << 53) * 2.0 - 1.0;
}

Series Series::Constant(double value) {
  Series s;
  s.AddConstant(value);
  return s;
}

double Series::Evaluate(double t) const {
  double value = constant_;
  for (const Ramp& r : ramps_) {
    double v = r.from + r.per_s * t;
    if (r.max) v = r.per_s >= 0 ? std::min(v, *r.max) : std::max(v, *r.max);
    value += v;
  }
  for (const Sawtooth& s : sawtooths_) {
    value += s.low + (s.high - s.low) * Fraction((t + s.phase_s) / s.period_s);
  }
  for (const Sine& s : sines_) {
    value += s.mean + s.amplitude * std::sin(2.0 * std::numbers::pi * (t + s.phase_s) / s.period_s);
  }
  if (!steps_.empty()) {
    double step_value = steps_.front().second;
    for (const auto& [at, v] : steps_) {
      if (at <= t) step_value = v;
    }
    value += step_value;
  }
  if (noise_amplitude_ != 0) value += noise_amplitude_ * Noise(seed_, t);
  return std::max(0.0, value);
}

}  // namespace gpuwatch::fake_nvml
