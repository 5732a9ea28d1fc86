// --web-config FILE: TLS and basic auth in the Prometheus exporter-toolkit
// format, so the file people already have for node_exporter works:
//
//   tls_server_config:
//     cert_file: server.crt
//     key_file: server.key
//     client_auth_type: RequireAndVerifyClientCert   # or NoClientCert (default)
//     client_ca_file: ca.crt
//     min_version: TLS12                              # TLS10..TLS13
//   basic_auth_users:
//     alice: $2y$10$...                               # bcrypt hashes only
//
// Errors name file:line:column. docs/serve.md.
#pragma once

#include <map>
#include <string>

#include "gpuwatch/status.h"

namespace gpuwatch::server {

struct WebConfig {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
  bool require_client_cert = false;
  int min_version = 0x0303;                  // TLS 1.2, as OpenSSL's TLS1_2_VERSION
  std::map<std::string, std::string> users;  // name -> bcrypt hash
  bool tls() const { return !cert_file.empty(); }
  friend bool operator==(const WebConfig&, const WebConfig&) = default;
};

// The highest bcrypt cost accepted: a check at 12 takes ~0.2 s of a core
// (at 31, days), and every wrong password costs one.
inline constexpr int kMaxBcryptCost = 12;

// Errors name file:line:column: a hash that is not bcrypt, a cost above
// kMaxBcryptCost, an empty file or one that configures nothing.
Result<WebConfig> LoadWebConfig(const std::string& path);

}  // namespace gpuwatch::server
