// The gate every request passes before its route (server_impl.h): a
// request that is not for this server, not a read, too large or not
// authenticated is answered here and its connection ends.
#include <fmt/format.h>

#include <cstdint>

#include "server/host_names.h"
#include "server/server_impl.h"

namespace gpuwatch::server {
namespace {

constexpr std::size_t kMaxHeaders = 100;
// An answer that ends its connection: the request's Connection header (the
// object is cpp-httplib's own, not const, as for the ranges below) makes the
// answer say close, and Admission ends the connection once it is sent.
void CloseAfterAnswer(const httplib::Request& req) {
  auto& headers = const_cast<httplib::Request&>(req).headers;
  headers.erase("Connection");
  headers.emplace("Connection", "close");
  Admission::CloseAfterResponse();
}

// The size of a request head as its client sent it: the request line, each
// header as "Name: value", the blank line. cpp-httplib adds the peer's and
// its own address as headers of its own (REMOTE_ADDR, ...): not counted. A
// client that wrote more (several spaces after a colon) looks as if it had
// pipelined, and its connection closes after the answer: never the reverse.
std::uint64_t RequestHeadBytes(const httplib::Request& req) {
  std::uint64_t n = req.method.size() + 1 + req.target.size() + 1 + req.version.size() + 2 + 2;
  for (const auto& [name, value] : req.headers) {
    if (name == "REMOTE_ADDR" || name == "REMOTE_PORT" || name == "LOCAL_ADDR" ||
        name == "LOCAL_PORT")
      continue;
    n += name.size() + 2 + value.size() + 2;
  }
  return n;
}

}  // namespace

httplib::Server::HandlerResponse CheckRequest(HttpServer::Impl& self, const httplib::Request& req,
                                              httplib::Response& res) {
  // Read past this request (pipelined): it is answered, then the connection ends.
  if (Admission::RequestArrived(RequestHeadBytes(req))) CloseAfterAnswer(req);
  // Each refusal below ends its connection too: what the client sent after
  // the head (a body not read, say) must not be read as the next request.
  if (!HostAllowed(self.hosts, req.get_header_value("Host"))) {
    SendError(res, 421,
              fmt::format("Host \"{}\" is not a name of this server (serve --allow-host adds "
                          "one)",
                          req.get_header_value("Host")));
    CloseAfterAnswer(req);
    return httplib::Server::HandlerResponse::Handled;
  }
  // Nothing over HTTP changes anything: every other method is refused
  // (before any body it brings is read).
  if (req.method != "GET" && req.method != "HEAD") {
    res.set_header("Allow", "GET, HEAD");
    SendError(res, 405, "gpuwatch serve is read-only: only GET and HEAD");
    CloseAfterAnswer(req);
    return httplib::Server::HandlerResponse::Handled;
  }
  // No route serves ranges: the whole body, always (1000 ranges of the
  // whole body were 1000 copies of it). The request object is cpp-httplib's
  // own, not const, so clearing its parsed ranges is well defined.
  const_cast<httplib::Request&>(req).ranges.clear();
  if (req.headers.size() > kMaxHeaders) {
    SendError(res, 431, fmt::format("more than {} header fields", kMaxHeaders));
    CloseAfterAnswer(req);
    return httplib::Server::HandlerResponse::Handled;
  }
  // No route takes a body: refused before it is read (chunked too).
  if (req.has_header("Transfer-Encoding") ||
      (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0")) {
    SendError(res, 413, "gpuwatch serve takes no request body");
    CloseAfterAnswer(req);
    return httplib::Server::HandlerResponse::Handled;
  }
  if (req.path == "/healthz" || req.path == "/readyz")
    return httplib::Server::HandlerResponse::Unhandled;
  switch (self.auth.Check(req.get_header_value("Authorization"))) {
    case Authenticator::Verdict::kAllowed:
      return httplib::Server::HandlerResponse::Unhandled;
    case Authenticator::Verdict::kBusy:
      res.set_header("Retry-After", "1");
      SendError(res, 503, "too many password checks at once; try again shortly");
      CloseAfterAnswer(req);
      return httplib::Server::HandlerResponse::Handled;
    case Authenticator::Verdict::kDenied:
      break;
  }
  res.set_header("WWW-Authenticate", "Basic realm=\"gpuwatch\", charset=\"UTF-8\"");
  SendError(res, 401, "authentication required");
  CloseAfterAnswer(req);
  return httplib::Server::HandlerResponse::Handled;
}

}  // namespace gpuwatch::server
