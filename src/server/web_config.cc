#include "server/web_config.h"

#include <crypt.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "server/yaml_file.h"

namespace gpuwatch::server {
Result<WebConfig> LoadWebConfig(const std::string& path) {
  auto loaded = LoadYamlFile(path, "--web-config");
  if (!loaded) return loaded.error();
  const YAML::Node root = *loaded;
  WebConfig c;
  if (root.IsNull()) return c;
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
        if (!(hash->starts_with("$2a$") || hash->starts_with("$2b$") ||
              hash->starts_with("$2y$"))) {
          return Status::InvalidArgument(fmt::format(
              "{}: basic_auth_users: {}: not a bcrypt hash (make one with `htpasswd -nBC 10 {}`)",
              YamlWhere(path, e.second.Mark()), user, user));
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

bool CheckPassword(const std::string& password, const std::string& hash) {
  crypt_data data{};
  const char* out = crypt_r(password.c_str(), hash.c_str(), &data);
  if (out == nullptr || out[0] == '*') return false;
  const std::size_t n = std::strlen(out);
  if (n != hash.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(out[i] ^ hash[i]);
  return diff == 0;
}

bool ParseBasicAuth(const std::string& header, std::string& user, std::string& password) {
  static const std::string kPrefix = "Basic ";
  if (header.size() <= kPrefix.size() || header.compare(0, kPrefix.size(), kPrefix) != 0)
    return false;
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string decoded;
  unsigned buffer = 0;
  int bits = 0;
  for (std::size_t i = kPrefix.size(); i < header.size(); ++i) {
    const char ch = header[i];
    if (ch == '=') break;
    const auto v = kAlphabet.find(ch);
    if (v == std::string::npos) return false;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      decoded += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  const auto colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  user = decoded.substr(0, colon);
  password = decoded.substr(colon + 1);
  return true;
}

}  // namespace gpuwatch::server
