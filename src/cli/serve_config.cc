#include "cli/serve_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "server/yaml_file.h"

namespace gpuwatch::cli {

Status LoadConfig(const std::string& path, ServeArgs& a, const CLI::App& command) {
  auto loaded = server::LoadYamlFile(path, "--config");
  if (!loaded) return loaded.error();
  const YAML::Node root = *loaded;
  if (root.IsNull()) return Status::Ok();
  if (!root.IsMap())
    return Status::InvalidArgument(fmt::format("{}: expected a mapping of options", path));
  struct Key {
    const char* name;
    std::string* text = nullptr;
    bool* flag = nullptr;
    std::vector<std::string>* list = nullptr;
  };
  const Key keys[] = {{"listen", &a.listen},
                      {"hostname", &a.hostname},
                      {"web-config", &a.web_config},
                      {"interval", &a.interval},
                      {"db", &a.outputs.db},
                      {"rules", &a.outputs.rules},
                      {"jsonl", &a.outputs.jsonl},
                      {"csv", &a.outputs.csv},
                      {"leak-window", &a.outputs.leak_window},
                      {"allow-commands", nullptr, &a.outputs.allow_commands},
                      {"process-metrics", nullptr, &a.process_metrics},
                      {"process-user", nullptr, &a.process_user},
                      {"dcgm-compat", nullptr, &a.dcgm_compat},
                      {"nvidia-smi-compat", nullptr, &a.nvidia_smi_compat},
                      {"socket", &a.socket},
                      {"allow-host", nullptr, nullptr, &a.allow_hosts}};
  for (const auto& entry : root) {
    const std::string name = entry.first.as<std::string>();
    const auto mark = entry.first.Mark();
    const Key* key = nullptr;
    for (const auto& k : keys) {
      if (name == k.name) key = &k;
    }
    if (key == nullptr) {
      std::string valid;
      for (const auto& k : keys) valid += std::string(valid.empty() ? "" : ", ") + k.name;
      return Status::InvalidArgument(fmt::format("{}: unknown option \"{}\" (valid: {})",
                                                 server::YamlWhere(path, mark), name, valid));
    }
    if (command.count("--" + name) > 0) continue;  // the command line wins
    try {
      if (key->text != nullptr) *key->text = entry.second.as<std::string>();
      if (key->flag != nullptr) *key->flag = entry.second.as<bool>();
      if (key->list != nullptr) {
        *key->list = entry.second.IsSequence() ? entry.second.as<std::vector<std::string>>()
                                               : std::vector{entry.second.as<std::string>()};
      }
    } catch (const YAML::Exception&) {
      return Status::InvalidArgument(fmt::format("{}: {}: expected {}",
                                                 server::YamlWhere(path, entry.second.Mark()), name,
                                                 key->flag != nullptr ? "true or false"
                                                 : key->list          ? "a name or a list"
                                                                      : "a value"));
    }
  }
  return Status::Ok();
}

}  // namespace gpuwatch::cli
