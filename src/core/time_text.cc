#include "core/time_text.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cstdint>
#include <ctime>

namespace gpuwatch {

std::string Rfc3339(std::chrono::system_clock::time_point t) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  // Floor, not truncation: a time before 1970 keeps its milliseconds positive.
  const auto secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  const auto frac = static_cast<int>(ms - static_cast<std::int64_t>(secs) * 1000);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", fmt::gmtime(secs), frac);
}

}  // namespace gpuwatch
