// Which Host header names `gpuwatch serve` answers. A page on another site
// can make a browser reach 127.0.0.1:9835 under its own name (DNS
// rebinding); only the names of this server are answered, so that page
// cannot read what the daemon shows (users, command lines).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpuwatch::server {

// The names of a server listening on `listen_host`: localhost, 127.0.0.1,
// ::1, the listen address (every address of the machine's interfaces when
// it is 0.0.0.0 or ::), the host name (and its first label; off loopback
// also the resolver's canonical name for it), and `extra` ("*" in extra: any
// name). Lower case.
std::set<std::string> AllowedHosts(const std::string& listen_host,
                                   const std::vector<std::string>& extra);

// Whether a Host header value ("name", "name:port", "[v6]:port") names one
// of `allowed` (case-insensitive; names under .localhost are loopback). No
// Host header at all (HTTP/1.0) is allowed: a browser always sends one.
bool HostAllowed(const std::set<std::string>& allowed, std::string_view host_header);

}  // namespace gpuwatch::server
