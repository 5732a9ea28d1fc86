#include "analysis/rules/yaml_document.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace gpuwatch::rules {
namespace {

// The 1-based line of the '---' that starts the document at `mark`: the
// nearest at or above it.
int SeparatorLine(std::string_view text, const YAML::Mark& mark) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  const int last = static_cast<int>(lines.size()) - 1;
  const int line = mark.is_null() ? last : std::min(mark.line, last);
  for (int i = line; i >= 0; --i) {
    if (lines[static_cast<std::size_t>(i)].starts_with("---")) return i + 1;
  }
  return line + 1;
}

}  // namespace

Status CheckOneDocument(const std::vector<YAML::Node>& documents, std::string_view text,
                        std::string_view source, std::string_view hint) {
  if (documents.size() <= 1) return Status::Ok();
  return Status::InvalidArgument(fmt::format("{}:{}:1: a second YAML document ('---'): {}", source,
                                             SeparatorLine(text, documents[1].Mark()), hint));
}

}  // namespace gpuwatch::rules
