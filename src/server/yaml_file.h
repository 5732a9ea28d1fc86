// Reading a YAML file the daemon is given (--config, --web-config): errors
// name the option, or the file:line:column and what is wrong there.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "gpuwatch/status.h"

namespace gpuwatch::server {

// "path:line:column" of `mark` (1-based).
std::string YamlWhere(const std::string& path, const YAML::Mark& mark);

// The document in `path`; `option` names the flag in "cannot read" errors.
Result<YAML::Node> LoadYamlFile(const std::string& path, std::string_view option);

}  // namespace gpuwatch::server
