// The members of one JSON document (a JSON Lines line of a recording, an
// answer of a daemon's API), read with their types checked. A member of the
// wrong type, or a number out of range, is noted with its path in the
// document (`devices[0].index: expected a whole number from 0 to 63, got
// "0"`) and its fallback returned, so a reader reads the document through and
// asks error() once; the first such member is the one named. Absent and null
// members take their fallback. Never throws (nlohmann's get and value do on a
// wrong type). One document, one owner.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gpuwatch {

class JsonMembers {
 public:
  using json = nlohmann::json;

  // `at` is the path of `object` in the document ("devices[0]"; "" for the
  // document itself); `object` need not be an object (then every member is
  // absent).
  std::string Text(const json& object, std::string_view at, std::string_view key,
                   std::string fallback = {});
  bool Flag(const json& object, std::string_view at, std::string_view key, bool fallback);
  std::optional<double> Number(const json& object, std::string_view at, std::string_view key);
  // RFC 3339 text (core/time_text.h's ParseRfc3339).
  std::optional<std::chrono::system_clock::time_point> Time(const json& object, std::string_view at,
                                                            std::string_view key);
  template <typename T>
  std::optional<T> Integer(const json& object, std::string_view at, std::string_view key,
                           T lo = std::numeric_limits<T>::min(),
                           T hi = std::numeric_limits<T>::max());
  // The array or object member `key`; an empty one when absent, null or
  // of another type (which is noted).
  const json& Array(const json& object, std::string_view at, std::string_view key);
  const json& Object(const json& object, std::string_view at, std::string_view key);

  // Notes that `path` should have been `expected` and was `got`.
  void Wrong(const std::string& path, std::string_view expected, const json& got);
  // "devices[0].index: expected a whole number, got \"0\""; "" when every
  // member read so far had its type.
  const std::string& error() const { return error_; }

  static std::string Path(std::string_view at, std::string_view key);
  static std::string Path(std::string_view at, std::string_view key, std::size_t index);
  // The member `key` of `object`, nullptr when absent or null (or `object`
  // is no object).
  static const json* Find(const json& object, std::string_view key);

 private:
  std::string error_;
};

template <typename T>
std::optional<T> JsonMembers::Integer(const json& object, std::string_view at, std::string_view key,
                                      T lo, T hi) {
  const json* v = Find(object, key);
  if (v == nullptr) return std::nullopt;
  bool fits = false;
  if (v->is_number_unsigned()) {
    const auto u = v->get<std::uint64_t>();
    fits = std::cmp_greater_equal(u, lo) && std::cmp_less_equal(u, hi);
  } else if (v->is_number_integer()) {
    const auto i = v->get<std::int64_t>();
    fits = std::cmp_greater_equal(i, lo) && std::cmp_less_equal(i, hi);
  }
  if (!fits) {
    const bool whole_range =
        lo == std::numeric_limits<T>::min() && hi == std::numeric_limits<T>::max();
    Wrong(Path(at, key),
          whole_range && lo == 0 ? "a whole number of at least 0"
          : whole_range          ? "a whole number"
                        : "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi),
          *v);
    return std::nullopt;
  }
  return v->is_number_unsigned() ? static_cast<T>(v->get<std::uint64_t>())
                                 : static_cast<T>(v->get<std::int64_t>());
}

}  // namespace gpuwatch
