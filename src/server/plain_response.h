// The fixed answers the server writes to a socket itself, outside
// cpp-httplib: a shed connection's 503 or probe answer, an oversized
// request's 431. Pure.
#pragma once

#include <string>
#include <string_view>

namespace gpuwatch::server {

// "HTTP/1.1 STATUS REASON", text/plain, its length, Retry-After for 503,
// Connection: close; the body unless `head`.
std::string PlainResponse(int status, std::string_view body, bool head);

}  // namespace gpuwatch::server
