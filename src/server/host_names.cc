#include "server/host_names.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "core/ascii.h"

namespace gpuwatch::server {
namespace {

void AddInterfaceAddresses(std::set<std::string>& out) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ifa_addr->sa_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
      if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr) out.insert(text);
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr);
      if (inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text) != nullptr) out.insert(text);
    }
  }
  freeifaddrs(list);
}

}  // namespace

std::set<std::string> AllowedHosts(const std::string& listen_host,
                                   const std::vector<std::string>& extra) {
  std::set<std::string> out = {"localhost", "127.0.0.1", "::1"};
  if (listen_host == "0.0.0.0" || listen_host == "::" || listen_host.empty()) {
    AddInterfaceAddresses(out);
  } else {
    out.insert(AsciiLower(listen_host));
  }
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') {
    const std::string host = AsciiLower(name);
    out.insert(host);
    out.insert(host.substr(0, host.find('.')));
    // Reached from other machines: also the name the resolver gives this
    // one (/etc/hosts, usually the fully qualified name). Not on loopback,
    // where a lookup could only delay the start.
    const bool loopback =
        listen_host == "127.0.0.1" || listen_host == "::1" || listen_host == "localhost";
    addrinfo hints{};
    hints.ai_flags = AI_CANONNAME;
    addrinfo* found = nullptr;
    if (!loopback && getaddrinfo(name, nullptr, &hints, &found) == 0) {
      if (found != nullptr && found->ai_canonname != nullptr)
        out.insert(AsciiLower(found->ai_canonname));
      freeaddrinfo(found);
    }
  }
  for (const std::string& e : extra) out.insert(AsciiLower(e));
  return out;
}

bool HostAllowed(const std::set<std::string>& allowed, std::string_view host_header) {
  if (host_header.empty()) return true;
  if (allowed.contains("*")) return true;
  std::string_view name = host_header;
  if (name.front() == '[') {
    const auto close = name.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = name.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return false;
    name = name.substr(1, close - 1);
  } else if (const auto colon = name.rfind(':'); colon != std::string_view::npos) {
    const std::string_view port = name.substr(colon + 1);
    if (!std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
    name = name.substr(0, colon);
  }
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);  // an absolute name
  const std::string lower = AsciiLower(name);
  if (lower.ends_with(".localhost")) return true;  // RFC 6761: always loopback
  return allowed.contains(lower);
}

}  // namespace gpuwatch::server
