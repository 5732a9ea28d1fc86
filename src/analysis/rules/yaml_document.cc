#include "analysis/rules/yaml_document.h"

#include <fmt/format.h>

namespace gpuwatch::rules {
namespace {

// "---" or "..." alone or followed by a blank: a document marker.
bool Marker(std::string_view line, std::string_view marker) {
  return line.starts_with(marker) &&
         (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
}

// A line that is part of a document's content (not blank, a comment or a directive).
bool Content(std::string_view line) {
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return false;
  return line[first] != '#' && !(first == 0 && line[0] == '%');
}

}  // namespace

Status CheckOneDocument(std::string_view text, std::string_view source, std::string_view hint) {
  bool content = false;  // the first document has begun
  bool ended = false;    // ... and a '...' ended it
  int number = 0;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++number;
    const bool start = Marker(line, "---");
    if ((start && (content || ended)) || (ended && Content(line))) {
      return Status::InvalidArgument(
          fmt::format("{}:{}:1: a second YAML document ('---'): {}", source, number, hint));
    }
    if (Marker(line, "...")) {
      ended = ended || content;
      continue;
    }
    if (start) {
      content = content || Content(line.substr(3));
      continue;
    }
    content = content || Content(line);
  }
  return Status::Ok();
}

}  // namespace gpuwatch::rules
