#include "server/web_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "server/basic_auth.h"
#include "server/yaml_file.h"

namespace gpuwatch::server {
Result<WebConfig> LoadWebConfig(const std::string& path) {
  auto loaded = LoadYamlFile(path, "--web-config");
  if (!loaded) return loaded.error();
  const YAML::Node root = *loaded;
  WebConfig c;
  if (root.IsNull()) {
    return Status::InvalidArgument(fmt::format(
        "{}: the web config is empty; give tls_server_config and/or basic_auth_users (without "
        "--web-config the daemon serves plain HTTP)",
        path));
  }
  if (!root.IsMap()) return Status::InvalidArgument(fmt::format("{}: expected a mapping", path));
  auto text_of = [&](const YAML::Node& n, const char* what) -> Result<std::string> {
    if (!n.IsScalar()) {
      return Status::InvalidArgument(
          fmt::format("{}: {}: expected a string", YamlWhere(path, n.Mark()), what));
    }
    return n.as<std::string>();
  };
  for (const auto& top : root) {
    const std::string key = top.first.as<std::string>();
    if (key == "tls_server_config") {
      if (!top.second.IsMap())
        return Status::InvalidArgument(fmt::format("{}: tls_server_config: expected a mapping",
                                                   YamlWhere(path, top.second.Mark())));
      for (const auto& e : top.second) {
        const std::string k = e.first.as<std::string>();
        auto v = text_of(e.second, k.c_str());
        if (!v) return v.error();
        if (k == "cert_file") {
          c.cert_file = *v;
        } else if (k == "key_file") {
          c.key_file = *v;
        } else if (k == "client_ca_file") {
          c.client_ca_file = *v;
        } else if (k == "client_auth_type") {
          if (*v == "RequireAndVerifyClientCert") {
            c.require_client_cert = true;
          } else if (*v != "NoClientCert") {
            return Status::InvalidArgument(
                fmt::format("{}: client_auth_type \"{}\": gpuwatch supports NoClientCert and "
                            "RequireAndVerifyClientCert",
                            YamlWhere(path, e.second.Mark()), *v));
          }
        } else if (k == "min_version") {
          const std::pair<const char*, int> versions[] = {
              {"TLS10", 0x0301}, {"TLS11", 0x0302}, {"TLS12", 0x0303}, {"TLS13", 0x0304}};
          bool found = false;
          for (const auto& [name, value] : versions) {
            if (*v == name) {
              c.min_version = value;
              found = true;
            }
          }
          if (!found) {
            return Status::InvalidArgument(
                fmt::format("{}: min_version \"{}\": one of TLS10, TLS11, TLS12, TLS13",
                            YamlWhere(path, e.second.Mark()), *v));
          }
        } else {
          return Status::InvalidArgument(
              fmt::format("{}: tls_server_config: unknown key \"{}\" (valid: cert_file, key_file, "
                          "client_auth_type, client_ca_file, min_version)",
                          YamlWhere(path, e.first.Mark()), k));
        }
      }
    } else if (key == "basic_auth_users") {
      if (!top.second.IsMap())
        return Status::InvalidArgument(
            fmt::format("{}: basic_auth_users: expected user: bcrypt-hash pairs",
                        YamlWhere(path, top.second.Mark())));
      for (const auto& e : top.second) {
        const std::string user = e.first.as<std::string>();
        auto hash = text_of(e.second, user.c_str());
        if (!hash) return hash.error();
        const int cost = BcryptCost(*hash);
        if (cost < 0) {
          return Status::InvalidArgument(fmt::format(
              "{}: basic_auth_users: {}: not a bcrypt hash ($2a$, $2b$ or $2y$, a two-digit "
              "cost, then 53 characters; make one with `htpasswd -nBC 10 {}`)",
              YamlWhere(path, e.second.Mark()), user, user));
        }
        if (cost > kMaxBcryptCost) {
          return Status::InvalidArgument(fmt::format(
              "{}: basic_auth_users: {}: bcrypt cost {} is above {} (each check would take "
              "{}x as long as at cost 10); make one with `htpasswd -nBC 10 {}`",
              YamlWhere(path, e.second.Mark()), user, cost, kMaxBcryptCost, 1 << (cost - 10),
              user));
        }
        c.users[user] = *hash;
      }
    } else if (key == "http_server_config") {
      continue;  // exporter-toolkit's HTTP/2 and header options: nothing to apply here
    } else {
      return Status::InvalidArgument(fmt::format(
          "{}: unknown key \"{}\" (valid: tls_server_config, basic_auth_users, http_server_config)",
          YamlWhere(path, top.first.Mark()), key));
    }
  }
  if (c.cert_file.empty() != c.key_file.empty()) {
    return Status::InvalidArgument(
        fmt::format("{}: tls_server_config needs both cert_file and key_file", path));
  }
  if (!c.tls() && c.users.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: configures neither TLS (tls_server_config) nor basic auth (basic_auth_users)", path));
  }
  if (c.require_client_cert && c.client_ca_file.empty()) {
    return Status::InvalidArgument(
        fmt::format("{}: client_auth_type RequireAndVerifyClientCert needs client_ca_file", path));
  }
  // Relative paths are relative to the config file, as in exporter-toolkit.
  const auto dir = path.find_last_of('/');
  for (std::string* p : {&c.cert_file, &c.key_file, &c.client_ca_file}) {
    if (!p->empty() && (*p)[0] != '/' && dir != std::string::npos)
      *p = path.substr(0, dir + 1) + *p;
  }
  return c;
}

}  // namespace gpuwatch::server
