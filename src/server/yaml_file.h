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

// The one document in `path`, a regular file of at most 1 MiB (a FIFO or
// /dev/zero is refused unread; core/text_file.h); `option` names the flag in
// "cannot read" and "not a regular file" errors. A second document is an
// error naming its line.
Result<YAML::Node> LoadYamlFile(const std::string& path, std::string_view option);

}  // namespace gpuwatch::server
