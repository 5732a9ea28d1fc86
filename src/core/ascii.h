// ASCII case folding, for words matched without regard to case (host names,
// field names, error messages): the C locale's, whatever the process's locale.
#pragma once

#include <string>
#include <string_view>

namespace gpuwatch {

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace gpuwatch
