#include "server/yaml_file.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace gpuwatch::server {

std::string YamlWhere(const std::string& path, const YAML::Mark& mark) {
  return fmt::format("{}:{}:{}", path, mark.line + 1, mark.column + 1);
}

Result<YAML::Node> LoadYamlFile(const std::string& path, std::string_view option) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument(fmt::format("{}: cannot read {}", option, path));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return YAML::Load(text.str());
  } catch (const YAML::ParserException& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", YamlWhere(path, e.mark), e.msg));
  }
}

}  // namespace gpuwatch::server
