#include "server/yaml_file.h"

#include <fmt/format.h>

#include "analysis/rules/yaml_document.h"
#include "core/text_file.h"

namespace gpuwatch::server {

std::string YamlWhere(const std::string& path, const YAML::Mark& mark) {
  return fmt::format("{}:{}:{}", path, mark.line + 1, mark.column + 1);
}

Result<YAML::Node> LoadYamlFile(const std::string& path, std::string_view option) {
  auto text = ReadTextFile(path);
  if (!text) {
    if (text.error().code() == Status::Code::kNotFound) {
      return Status::InvalidArgument(fmt::format("{}: cannot read {}", option, path));
    }
    return text.error().WithContext(option);
  }
  if (Status s = rules::CheckOneDocument(*text, path, fmt::format("{} is one document", option));
      !s.ok()) {
    return s;
  }
  try {
    return YAML::Load(*text);
  } catch (const YAML::ParserException& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", YamlWhere(path, e.mark), e.msg));
  }
}

}  // namespace gpuwatch::server
