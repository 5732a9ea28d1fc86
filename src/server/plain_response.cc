#include "server/plain_response.h"

#include <fmt/format.h>

namespace gpuwatch::server {
namespace {

std::string_view Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

}  // namespace

std::string PlainResponse(int status, std::string_view body, bool head) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{}Connection: "
      "close\r\n\r\n{}",
      status, Reason(status), body.size(), status == 503 ? "Retry-After: 1\r\n" : "",
      head ? "" : body);
}

}  // namespace gpuwatch::server
