// A YAML file is one document: a second one (after a '---') would otherwise
// be dropped without a word (every rule after it, every option). Shared by
// the rule files and the daemon's --config and --web-config.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string_view>
#include <vector>

#include "gpuwatch/status.h"

namespace gpuwatch::rules {

// Ok for at most one document of `text` (what YAML::LoadAll gave); else an
// error "SOURCE:LINE:1: a second YAML document ('---'): HINT" at the line of
// the '---' that starts the second.
Status CheckOneDocument(const std::vector<YAML::Node>& documents, std::string_view text,
                        std::string_view source, std::string_view hint);

}  // namespace gpuwatch::rules
