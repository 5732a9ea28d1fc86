// Addresses of remote daemons (--remote): ParseEndpoint and ParseEndpoints
// of remote_api.h.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/ascii.h"
#include "core/printable.h"
#include "tui/remote_api.h"

namespace gpuwatch::tui {
namespace {

bool HostNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

}  // namespace

Result<RemoteEndpoint> ParseEndpoint(std::string_view address) {
  const std::string_view text = TrimBlanks(address);
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument(fmt::format("remote address \"{}\": {}", text, why));
  };
  if (text.empty()) return Status::InvalidArgument("remote address is empty");
  RemoteEndpoint e;
  e.label = std::string(text);
  std::string_view rest = text;
  if (const auto sep = rest.find("://"); sep != std::string_view::npos) {
    e.scheme = AsciiLower(rest.substr(0, sep));
    if (e.scheme != "http" && e.scheme != "https")
      return bad(fmt::format("scheme \"{}\" is not http or https", rest.substr(0, sep)));
    rest.remove_prefix(sep + 3);
  }
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (const auto slash = rest.find_first_of("/?#"); slash != std::string_view::npos)
    return bad(
        fmt::format("has a path (\"{}\"): give the daemon as host:port", rest.substr(slash)));
  if (rest.find('@') != std::string_view::npos)
    return bad(
        "credentials do not go in the address: use --remote-user and GPUWATCH_REMOTE_PASSWORD");
  std::string_view port_text;
  bool has_port = false;
  if (rest.starts_with('[')) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) return bad("\"[\" without \"]\" around an IPv6 address");
    e.host = std::string(rest.substr(1, close - 1));
    in6_addr v6{};
    if (inet_pton(AF_INET6, e.host.c_str(), &v6) != 1)
      return bad(fmt::format("\"{}\" is not an IPv6 address", e.host));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest.front() != ':') return bad("text after \"]\" that is not \":port\"");
    has_port = !rest.empty();
    if (has_port) port_text = rest.substr(1);
  } else {
    const auto colon = rest.find(':');
    if (colon != std::string_view::npos && rest.find(':', colon + 1) != std::string_view::npos)
      return bad("an IPv6 address needs brackets: [::1]:9835");
    e.host = std::string(rest.substr(0, colon));
    has_port = colon != std::string_view::npos;
    if (has_port) port_text = rest.substr(colon + 1);
    if (e.host.empty()) return bad("no host");
    if (e.host.size() > 253 || !std::all_of(e.host.begin(), e.host.end(), HostNameChar))
      return bad(fmt::format("\"{}\" is not a host name or address", Printable(e.host)));
  }
  if (has_port) {
    int port = 0;
    const auto [end, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty()) return bad("no port after \":\"");
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 65535)
      return bad(fmt::format("port \"{}\" is not a number from 1 to 65535", Printable(port_text)));
    e.port = port;
  }
  return e;
}

Result<std::vector<RemoteEndpoint>> ParseEndpoints(std::string_view list) {
  if (TrimBlanks(list).empty()) return Status::InvalidArgument("remote list is empty");
  std::vector<RemoteEndpoint> out;
  std::size_t start = 0;
  for (int n = 1;; ++n) {
    const auto comma = list.find(',', start);
    const std::string_view entry = list.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (TrimBlanks(entry).empty()) {
      return Status::InvalidArgument(fmt::format("remote list \"{}\": entry {} is empty", list, n));
    }
    auto e = ParseEndpoint(entry);
    if (!e) return e.error();
    for (const RemoteEndpoint& seen : out) {
      if (seen.scheme == e->scheme && AsciiLower(seen.host) == AsciiLower(e->host) &&
          seen.port == e->port) {
        return Status::InvalidArgument(
            fmt::format("remote list \"{}\": \"{}\" and \"{}\" are the same daemon", list,
                        seen.label, e->label));
      }
    }
    out.push_back(std::move(*e));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace gpuwatch::tui
