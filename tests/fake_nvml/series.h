// A scenario time series: a value as a function of scenario time t (seconds).
// The value is the sum of its shapes (constant, ramp, sawtooth, steps, sine)
// plus deterministic noise, clamped to >= 0. Immutable once parsed; Evaluate
// is a pure function of t, so the same t always gives the same value.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace gpuwatch::fake_nvml {

struct Ramp {
  double from = 0;
  double per_s = 0;
  std::optional<double> max;  // the ramp stops growing here
};

struct Sawtooth {
  double low = 0;
  double high = 0;
  double period_s = 60;
  double phase_s = 0;
};

struct Sine {
  double mean = 0;
  double amplitude = 0;
  double period_s = 60;
  double phase_s = 0;
};

class Series {
 public:
  Series() = default;
  static Series Constant(double value);

  // Value at scenario time t, in the series' own unit (bytes, W, %, ...).
  double Evaluate(double t) const;

  void AddConstant(double value) { constant_ += value; }
  void AddRamp(const Ramp& ramp) { ramps_.push_back(ramp); }
  void AddSawtooth(const Sawtooth& saw) { sawtooths_.push_back(saw); }
  void AddSine(const Sine& sine) { sines_.push_back(sine); }
  // Steps sorted by time: the value of the last step whose time is <= t (the
  // first step's value before it).
  void SetSteps(std::vector<std::pair<double, double>> steps) { steps_ = std::move(steps); }
  void SetNoise(double amplitude, std::uint64_t seed) {
    noise_amplitude_ = amplitude;
    seed_ = seed;
  }
  void SetSeed(std::uint64_t seed) { seed_ = seed; }

 private:
  double constant_ = 0;
  std::vector<Ramp> ramps_;
  std::vector<Sawtooth> sawtooths_;
  std::vector<Sine> sines_;
  std::vector<std::pair<double, double>> steps_;
  double noise_amplitude_ = 0;
  std::uint64_t seed_ = 0;
};

// A deterministic hash in [-1, 1] of a seed and t rounded to 100 ms.
double Noise(std::uint64_t seed, double t);

// Stable 64-bit hash of a string (FNV-1a), for seeds and generated ids.
std::uint64_t HashString(const char* text, std::uint64_t seed = 0);

}  // namespace gpuwatch::fake_nvml
