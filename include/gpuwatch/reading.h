// Reading: one value that may be absent, and if so, why. Unsupported is a
// state, not an error and never a zero.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace gpuwatch {

enum class Missing : std::uint8_t {
  kNotYetSampled,  // nothing read yet (cadence not reached)
  kNotSupported,   // the device or driver does not offer it
  kNoPermission,   // the driver refused the caller
  kDeviceLost,     // GPU_IS_LOST: the device fell off the bus
  kImplausible,    // read, but the value cannot be true (> 100 %, used > total)
  kFailed,         // any other error; the detail says which
};

std::string_view MissingName(Missing m);  // "not_supported", ...
// The inverse of MissingName (recordings); kFailed for an unknown name.
Missing MissingFromName(std::string_view name);

class Reading {
 public:
  Reading() = default;
  static Reading Number(double v) { return Reading(v); }
  static Reading Text(std::string s) { return Reading(std::move(s)); }
  // `detail` is the driver's own words where there are some
  // ("nvmlDeviceGetFanSpeed: Not Supported").
  static Reading Absent(Missing why, std::string detail = {}) {
    Reading r;
    r.value_ = why;
    r.detail_ = std::move(detail);
    return r;
  }

  bool ok() const { return value_.index() != 0; }
  bool is_number() const { return value_.index() == 1; }
  bool is_text() const { return value_.index() == 2; }
  double number() const { return std::get<1>(value_); }
  const std::string& text() const { return std::get<2>(value_); }
  double number_or(double fallback) const { return is_number() ? number() : fallback; }
  Missing missing() const { return std::get<0>(value_); }
  const std::string& detail() const { return detail_; }

  friend bool operator==(const Reading&, const Reading&) = default;

 private:
  explicit Reading(double v) : value_(v) {}
  explicit Reading(std::string s) : value_(std::move(s)) {}
  std::variant<Missing, double, std::string> value_{Missing::kNotYetSampled};
  std::string detail_;
};

}  // namespace gpuwatch
