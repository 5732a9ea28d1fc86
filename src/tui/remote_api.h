// Remote `gpuwatch serve` daemons as a source of `top` (`--remote`): their
// addresses, their JSON API documents (docs/API.md) read back into a
// HostState, and one daemon polled over HTTP(S).
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuwatch/event.h"
#include "gpuwatch/status.h"
#include "tui/host_view.h"

namespace httplib {
class ClientImpl;
class SSLClient;
}  // namespace httplib

namespace gpuwatch::tui {

inline constexpr int kDefaultRemotePort = 9835;

struct RemoteEndpoint {
  std::string label;            // as the user wrote it ("host1:9835")
  std::string scheme = "http";  // "http" or "https"
  std::string host;             // a name, an IPv4 address, or an IPv6 one without brackets
  int port = kDefaultRemotePort;
  std::string user, password;  // HTTP basic auth; empty user: none
  std::string ca_file;    // https: verify the server against this CA bundle ("" = system store)
  bool insecure = false;  // https: skip certificate verification
  std::chrono::milliseconds timeout{2000};  // connect + read, each request
};

// "host", "host:port", "http://host:port", "https://host:port", "[::1]:9835"
// (a trailing "/" allowed); port defaults to 9835. Bad input (another scheme,
// a path, credentials in the address, an IPv6 address without brackets, a
// port that is not 1..65535) -> InvalidArgument whose message names the
// address and what is wrong.
Result<RemoteEndpoint> ParseEndpoint(std::string_view address);
// A comma-separated list ("h1:9835,h2:9835"); empty entries and two entries
// naming the same daemon (scheme, host and port) are errors naming them.
Result<std::vector<RemoteEndpoint>> ParseEndpoints(std::string_view list);

// Pure: a /api/v1/snapshot document (schema gpuwatch.api/1, built by
// SnapshotDocument in src/export/api_documents.cc) back into a HostState
// (label = `where`): the Snapshot (time to the microsecond, sequence, stale,
// demo, source, sample duration, host fields, every device's health, fields
// and reasons, processes with their host identity, MIG devices), alerts,
// leaks (capacity from the GPU's total memory), framework entries,
// preallocated, and leases (from every device's "lease" and "lease_queue";
// none when the document has no lease keys or says "lease_error"). Keys the
// catalogue does not know (a newer daemon's fields) are skipped. A document
// that has no sample yet ("time": null) gives a null snapshot. What the
// document does not carry stays empty: process start ticks (0), a leak's
// floor and spans, a waiter's start ticks. A document that is not a gpuwatch
// API snapshot -> InvalidArgument "not a gpuwatch API: <why>" (the member
// and the type it should have had), prefixed by "`where`: " unless `where`
// is empty.
Result<HostState> ParseSnapshotDocument(const nlohmann::json& doc, const std::string& where);
// Pure: a /api/v1/events document back into events, in its order; events of
// kinds this version does not know are left out. Errors as above.
Result<std::vector<Event>> ParseEventsDocument(const nlohmann::json& doc, const std::string& where);

// One daemon: GET /api/v1/snapshot and /api/v1/events over cpp-httplib (TLS
// with OpenSSL, basic auth), a new connection per request (an idle
// keep-alive connection would hold one of the daemon's workers). Not
// thread-safe; one owner thread. Refresh blocks while it asks: each request
// gives up when connecting, or waiting for the next bytes, takes longer than
// the endpoint's timeout (a refused connection is tried once more, to learn
// why).
class RemoteHost {
 public:
  explicit RemoteHost(RemoteEndpoint endpoint);
  ~RemoteHost();
  RemoteHost(RemoteHost&&) noexcept;
  RemoteHost& operator=(RemoteHost&&) noexcept;

  // Refreshes `state`: on success everything replaced (label = the
  // endpoint's), down = "", updated = now; on failure state.down = the
  // reason ("connection refused", "timed out after 2 s", "401 Unauthorized:
  // check --remote-user / GPUWATCH_REMOTE_PASSWORD", "HTTP 503 Service
  // Unavailable: ...", "TLS: certificate verify failed: ...", "not a
  // gpuwatch API: ...") and the previous snapshot kept. A daemon that
  // answers without a sample yet keeps the previous snapshot too, down
  // saying so (with its /readyz reason). Returns whether it answered.
  // On an answer, appends to `events` the events newer than those of the
  // last Refresh (GET /api/v1/events?since=T; the first answer takes the
  // last 50); an events request that fails is skipped, not a down. An event
  // the daemon records later with an older time than one already taken is
  // not seen.
  bool Refresh(HostState& state, std::vector<Event>& events);
  const RemoteEndpoint& endpoint() const { return endpoint_; }

 private:
  struct Answer;
  Answer Get(const std::string& path);
  void TakeEvents(std::vector<Event>& events);

  RemoteEndpoint endpoint_;
  std::unique_ptr<httplib::ClientImpl> client_;  // an SSLClient for https
  httplib::SSLClient* tls_ = nullptr;            // client_, when it is one
  bool events_started_ = false;
  std::chrono::system_clock::time_point events_since_{};  // the newest event taken
  // The events taken near events_since_, as JSON (the API's since is >=).
  std::vector<std::pair<std::chrono::system_clock::time_point, std::string>> events_seen_;
};

}  // namespace gpuwatch::tui
