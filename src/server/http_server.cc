#include "server/http_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <memory>
#include <optional>
#include <set>

#include "core/driver_calls.h"
#include "core/thread_name.h"
#include "server/admission.h"
#include "server/basic_auth.h"
#include "server/host_names.h"
#include "server/metrics_body.h"
#include "webassets/web_assets.h"

namespace gpuwatch::server {
namespace {

using nlohmann::json;

constexpr int kListenBacklog = 1024;

void SendJson(httplib::Response& res, const json& body, int status = 200) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  SendJson(res, json{{"error", message}}, status);
}

// /metrics: the cached head, then the live tail; gzip when the client takes
// it (one member: the head's blocks as cached, the tail compressed now).
// Served from a content provider: the head is not copied, and cpp-httplib,
// which compresses text bodies itself, leaves a provider's bytes as they are.
void SendMetrics(httplib::Response& res, std::shared_ptr<const MetricsHead> head, std::string tail,
                 bool gzip, const std::string& content_type) {
  struct Body {
    std::shared_ptr<const MetricsHead> head;
    const std::string* start = nullptr;  // the head's text or gzip start
    std::string end;                     // the tail, or its gzip end
  };
  auto body = std::make_shared<Body>();
  body->start = gzip ? &head->gzip_start : &head->text;
  body->end = gzip ? GzipEnd(*head, tail) : std::move(tail);
  body->head = std::move(head);
  if (gzip) res.set_header("Content-Encoding", "gzip");
  res.set_header("Vary", "Accept-Encoding");
  res.set_content_provider(
      body->start->size() + body->end.size(), content_type,
      [body](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        const std::string& start = *body->start;
        if (offset < start.size()) {
          return sink.write(start.data() + offset, std::min(length, start.size() - offset));
        }
        const std::size_t at = offset - start.size();
        return sink.write(body->end.data() + at, std::min(length, body->end.size() - at));
      });
}

// A query parameter as a number, finite and within +-1e11 (times are Unix
// seconds: the year 5138; larger would overflow the clock's integer).
Result<double> NumberParam(const httplib::Request& req, const char* name, double fallback) {
  if (!req.has_param(name)) return fallback;
  const std::string v = req.get_param_value(name);
  double out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) {
    return Status::InvalidArgument(fmt::format("parameter {}: \"{}\" is not a number", name, v));
  }
  if (!std::isfinite(out) || std::fabs(out) > 1e11) {
    return Status::InvalidArgument(
        fmt::format("parameter {}: {} is out of range (at most 1e11 either way)", name, v));
  }
  return out;
}

std::chrono::system_clock::time_point FromUnix(double s) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(s)));
}

// One SSE message. `id` is the sequence of the newest event the client has
// had with it (events: their own; snapshots: the newest before them), so the
// Last-Event-ID a client reconnects with says which events it missed.
std::string SseMessage(std::uint64_t id, std::string_view event, const json& data) {
  return fmt::format("id: {}\nevent: {}\ndata: {}\n\n", id, event,
                     data.dump(-1, ' ', false, json::error_handler_t::replace));
}

// The Last-Event-ID a reconnecting client sends: nullopt when absent, an
// error naming the header when it is not a sequence this server sends.
Result<std::optional<std::uint64_t>> LastEventId(const httplib::Request& req) {
  if (!req.has_header("Last-Event-ID")) return std::optional<std::uint64_t>();
  const std::string v = req.get_header_value("Last-Event-ID");
  std::uint64_t id = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), id);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
    return Status::InvalidArgument(fmt::format(
        "header Last-Event-ID: \"{}\" is not an event id (the decimal id: of a message this "
        "stream sent)",
        v.substr(0, 64)));
  }
  return std::optional<std::uint64_t>(id);
}

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

// Requests one connection may carry before the server closes it.
constexpr std::size_t kKeepAliveRequests = 100;

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
// Before a first snapshot, a driver call in flight this long is hung (after
// it, the sampler says so of each GPU, and of the whole snapshot).
constexpr auto kHungAfter = std::chrono::seconds(5);

const char kNoDashboard[] =
    "<!doctype html><meta charset=utf-8><title>gpuwatch</title>"
    "<p>gpuwatch serve: this build has no dashboard bundle (npm ci --prefix web, then build "
    "again). <a href=/metrics>/metrics</a> · <a href=/api/v1/snapshot>/api/v1/snapshot</a>";

// The dashboard page as served: for a demo its data-source="live" says "demo", so the page
// shows the DEMO banner at its first paint, before its script asks anything (web/README.md).
constexpr std::string_view kLiveSource = "data-source=\"live\"";
constexpr std::string_view kDemoSource = "data-source=\"demo\"";

std::string DashboardPage(std::string_view html, bool demo) {
  std::string page(html);
  const auto at = page.find(kLiveSource);
  if (demo && at != std::string::npos) page.replace(at, kLiveSource.size(), kDemoSource);
  return page;
}

}  // namespace

struct HttpServer::Impl {
  std::unique_ptr<httplib::Server> owned;
  httplib::Server* server = nullptr;
  std::shared_ptr<Hub> hub;
  HttpOptions options;
  std::atomic<int> streams{0};
  std::atomic<bool> stopping{false};
  Authenticator auth;
  std::set<std::string> hosts;  // the Host names accepted ("*": any)
  std::shared_ptr<AdmissionStats> admission = std::make_shared<AdmissionStats>();
  MetricsHeads heads;  // /metrics' published part, per format
  int listen_fd = -1;  // the listening socket (the last one cpp-httplib made), Start's thread only

  // The lease file now; nullopt when this server shows no leases.
  std::optional<LeaseRead> ReadLeases() const {
    if (!options.leases) return std::nullopt;
    return options.leases();
  }

  // /healthz and /readyz, answered by a worker or, when none is free, by the
  // admission shedder.
  ProbeAnswer Probe(std::string_view path) const {
    if (path == "/healthz") return {200, "ok\n"};
    const std::string why = hub->NotReady();
    if (!why.empty()) return {503, "not ready: " + why + "\n"};
    const auto held = hub->Latest();
    const Published& p = *held;
    if (p.snapshot && p.snapshot->stale) {
      return {503, "not ready: the driver is not answering (serving the last snapshot)\n"};
    }
    return {200, "ready\n"};
  }
};

namespace {

// TLS as the web config says: certificate chain, key, minimum version, and
// client certificates verified against the CA when required.
std::unique_ptr<httplib::Server> MakeTlsServer(const WebConfig& c, std::string& error) {
  auto server = std::make_unique<httplib::SSLServer>([&c, &error](SSL_CTX& ctx) {
    SSL_CTX_set_min_proto_version(&ctx, c.min_version);
    SSL_CTX_set_options(&ctx,
                        SSL_OP_NO_COMPRESSION | SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
    if (SSL_CTX_use_certificate_chain_file(&ctx, c.cert_file.c_str()) != 1) {
      error = fmt::format("cannot load cert_file {}", c.cert_file);
      return false;
    }
    if (SSL_CTX_use_PrivateKey_file(&ctx, c.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(&ctx) != 1) {
      error =
          fmt::format("cannot load key_file {} (or it does not match the certificate)", c.key_file);
      return false;
    }
    if (!c.client_ca_file.empty()) {
      if (SSL_CTX_load_verify_locations(&ctx, c.client_ca_file.c_str(), nullptr) != 1) {
        error = fmt::format("cannot load client_ca_file {}", c.client_ca_file);
        return false;
      }
      SSL_CTX_set_verify(&ctx,
                         c.require_client_cert ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                                               : SSL_VERIFY_PEER,
                         nullptr);
    }
    return true;
  });
  return server;
}

}  // namespace

Status ParseListen(std::string_view text, std::string& host, int& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return Status::InvalidArgument(
        fmt::format("--listen \"{}\": expected HOST:PORT (e.g. 127.0.0.1:9835)", text));
  }
  std::string_view h = text.substr(0, colon);
  const std::string_view p = text.substr(colon + 1);
  int value = 0;
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (ec != std::errc() || end != p.data() + p.size() || value < 0 || value > 65535) {
    return Status::InvalidArgument(
        fmt::format("--listen \"{}\": \"{}\" is not a port (0-65535)", text, p));
  }
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  host = h.empty() ? "0.0.0.0" : std::string(h);
  port = value;
  return Status::Ok();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options,
                                                      std::shared_ptr<Hub> hub) {
  std::unique_ptr<HttpServer> s(new HttpServer());
  s->impl_ = std::make_unique<Impl>();
  Impl& impl = *s->impl_;
  impl.hub = std::move(hub);
  impl.options = options;
  impl.auth.SetUsers(options.web.users);
  impl.hosts = AllowedHosts(options.host, options.allowed_hosts);
  if (options.web.tls()) {
    std::string error;
    impl.owned = MakeTlsServer(options.web, error);
    if (!impl.owned->is_valid()) {
      return Status::InvalidArgument("--web-config: " +
                                     (error.empty() ? "TLS setup failed" : error));
    }
  } else {
    impl.owned = std::make_unique<httplib::Server>();
  }
  impl.server = impl.owned.get();
  httplib::Server& srv = *impl.server;
  Impl* self = &impl;
  AdmissionOptions admission;
  admission.workers = options.workers;
  admission.queue = options.queue;
  admission.idle_exit = options.idle_worker_exit;
  admission.request_deadline = options.request_deadline;
  admission.plain_http = !options.web.tls();
  admission.probe = [self](std::string_view path) { return self->Probe(path); };
  admission.stats = impl.admission;
  srv.new_task_queue = [admission] { return new Admission(admission); };
  srv.set_logger(
      [](const httplib::Request&, const httplib::Response&) { Admission::ResponseSent(); });
  srv.set_read_timeout(options.read_timeout);
  srv.set_write_timeout(options.write_timeout);
  // Keep-alive on plain HTTP: a scraper asking again skips the connection's
  // setup and teardown (most of a scrape's cost). cpp-httplib 0.11 reads a
  // connection through a fresh buffer for every request, so requests
  // pipelined into one write would be lost after the first: Admission sees
  // that more was read than the request (RequestArrived) and the answer
  // closes the connection, which tells such a client to retry the rest. With
  // TLS that count is of records, not requests: one request a connection.
  srv.set_keep_alive_max_count(options.web.tls() ? 1 : kKeepAliveRequests);
  srv.set_payload_max_length(1024);  // nothing here takes a body
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, which
  // would let a second daemon share the port silently.
  srv.set_socket_options([self](socket_t sock) {
    self->listen_fd = sock;
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof yes);
  });
  srv.set_default_headers({{"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-store"}});

  // Before any route: the Host check (DNS rebinding), GET and HEAD only, a
  // bounded header count, no bodies, no ranges, then basic auth on
  // everything but the probes.
  srv.set_pre_routing_handler([self](const httplib::Request& req, httplib::Response& res) {
    // Read past this request (pipelined): it is answered, then the connection ends.
    if (Admission::RequestArrived(RequestHeadBytes(req))) CloseAfterAnswer(req);
    // Each refusal below ends its connection too: what the client sent after
    // the head (a body not read, say) must not be read as the next request.
    if (!HostAllowed(self->hosts, req.get_header_value("Host"))) {
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
    switch (self->auth.Check(req.get_header_value("Authorization"))) {
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
  });
  srv.Get("/metrics", [self](const httplib::Request& req, httplib::Response& res) {
    self->hub->CountScrape();
    MetricsOptions mo = self->options.metrics;
    mo.format = NegotiateMetricsFormat(req.get_header_value("Accept"));
    const auto held = self->hub->Latest();
    const Published& p = *held;
    // What changes between scrapes; the publication's part is added only when
    // it is rendered, once per sample and format.
    MetricsInput in;
    in.snapshot = p.snapshot.get();
    in.hostname = self->options.api.hostname;
    in.stats = self->hub->Stats();
    in.stats.version = self->options.version;
    in.stats.http_shed = self->admission->shed.load();
    in.stats.http_deadline_cuts = self->admission->deadline_cuts.load();
    in.stats.http_oversize_cuts = self->admission->oversize_cuts.load();
    // Hung also before a first snapshot: the driver's opening calls never returned.
    if (!p.snapshot) in.stats.sampler_hung = DescribeHungCall(kHungAfter).has_value();
    // A lease file that cannot be read leaves the lease series out (unknown, not 0).
    if (auto leases = self->ReadLeases(); leases && *leases) in.leases = std::move(**leases);
    in.now = std::chrono::system_clock::now();
    // The published part once per sample; per scrape only the live part.
    auto head = self->heads.Get(p.version, mo.format, [&] {
      MetricsInput published = in;
      published.alerts = p.alerts;
      published.leaks = p.leaks;
      published.framework = p.framework;
      published.preallocated = p.preallocated;
      published.diagnoses = p.diagnoses;
      return RenderPublishedMetrics(published, mo);
    });
    SendMetrics(res, std::move(head), RenderLiveMetrics(in, mo),
                AcceptsGzip(req.get_header_value("Accept-Encoding")),
                std::string(MetricsContentType(mo.format)));
  });
  for (const char* probe : {"/healthz", "/readyz"}) {
    srv.Get(probe, [self](const httplib::Request& req, httplib::Response& res) {
      const ProbeAnswer a = self->Probe(req.path);
      res.status = a.status;
      res.set_content(a.body, "text/plain");
    });
  }
  srv.Get("/api/v1/snapshot", [self](const httplib::Request&, httplib::Response& res) {
    const auto leases = self->ReadLeases();
    SendJson(res, SnapshotDocument(*self->hub->Latest(), self->options.api,
                                   leases ? &*leases : nullptr));
  });
  srv.Get("/api/v1/devices", [self](const httplib::Request&, httplib::Response& res) {
    const auto leases = self->ReadLeases();
    SendJson(res, DevicesDocument(*self->hub->Latest(), leases ? &*leases : nullptr));
  });
  srv.Get("/api/v1/leases", [self](const httplib::Request&, httplib::Response& res) {
    const auto leases = self->ReadLeases();
    if (!leases) return SendError(res, 404, "this server shows no leases");
    if (!*leases)
      return SendError(res, 503, "cannot read the leases: " + leases->error().message());
    SendJson(res, LeasesDocument(**leases));
  });
  srv.Get("/api/v1/processes", [self](const httplib::Request&, httplib::Response& res) {
    SendJson(res, ProcessesDocument(*self->hub->Latest()));
  });
  srv.Get("/api/v1/events", [self](const httplib::Request& req, httplib::Response& res) {
    auto since = NumberParam(req, "since", 0);
    auto limit = NumberParam(req, "limit", 1000);
    if (!since) return SendError(res, 400, since.error().message());
    if (!limit) return SendError(res, 400, limit.error().message());
    if (*limit < 1 || *limit > 5000) return SendError(res, 400, "parameter limit: 1..5000");
    SendJson(res, EventsDocument(
                      self->hub->EventsSince(FromUnix(*since), static_cast<std::size_t>(*limit))));
  });
  srv.Get("/api/v1/history", [self](const httplib::Request& req, httplib::Response& res) {
    HistoryQuery q;
    auto device = NumberParam(req, "device", 0);
    const double now = UnixSeconds(std::chrono::system_clock::now());
    auto from = NumberParam(req, "from", now - 300);
    auto to = NumberParam(req, "to", now + 1);
    auto step = NumberParam(req, "step", 0);
    for (const auto* r : {&device, &from, &to, &step}) {
      if (!*r) return SendError(res, 400, r->error().message());
    }
    if (*to <= *from) return SendError(res, 400, "parameter to must be after from");
    if (*step < 0) return SendError(res, 400, "parameter step must be >= 0");
    if (*device < 0 || *device > 1e6 || *device != std::floor(*device)) {
      return SendError(res, 400, "parameter device: a GPU index (0, 1, ...)");
    }
    q.device = static_cast<int>(*device);
    q.from = FromUnix(*from);
    q.to = FromUnix(*to);
    q.step = std::chrono::milliseconds(static_cast<std::int64_t>(*step * 1000));
    const std::string fields =
        req.has_param("fields") ? req.get_param_value("fields") : "memory_used_bytes";
    std::size_t start = 0;
    while (start <= fields.size()) {
      const auto comma = fields.find(',', start);
      const std::string key =
          fields.substr(start, comma == std::string::npos ? comma : comma - start);
      auto id = FindByKey(key);
      if (!id || Info(*id).scope != Scope::kDevice) {
        return SendError(res, 400,
                         fmt::format("parameter fields: \"{}\" is not a device field "
                                     "(the catalogue keys of docs/json.md)",
                                     key));
      }
      q.fields.push_back(*id);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    auto doc = self->options.history(q);
    if (!doc) {
      return SendError(res, doc.error().code() == Status::Code::kNotFound ? 404 : 400,
                       doc.error().message());
    }
    SendJson(res, *doc);
  });
  srv.Get("/api/v1/stream", [self](const httplib::Request& req, httplib::Response& res) {
    const auto resume = LastEventId(req);
    if (!resume) return SendError(res, 400, resume.error().message());
    if (self->streams.fetch_add(1) >= self->options.max_streams) {
      self->streams.fetch_sub(1);
      res.set_header("Retry-After", "5");
      return SendError(res, 503, "too many live streams; try again later");
    }
    res.set_header("X-Accel-Buffering", "no");
    struct Cursor {
      std::uint64_t version = 0;
      std::uint64_t events = 0;
      bool started = false;
      std::optional<std::uint64_t> resume;  // Last-Event-ID: replay the events after it
    };
    auto cursor = std::make_shared<Cursor>();
    cursor->resume = *resume;
    // The events after the cursor, each with its id; moves the cursor on.
    auto events_after = [self, cursor](std::uint64_t after) {
      std::string out;
      std::uint64_t newest = 0;
      for (const auto& e : self->hub->SequencedEventsAfter(after, &newest)) {
        out += SseMessage(e.sequence, "event", EventDocument(e.event));
      }
      cursor->events = newest;
      return out;
    };
    res.set_chunked_content_provider(
        "text/event-stream",
        [self, cursor, events_after](std::size_t, httplib::DataSink& sink) {
          if (!cursor->started) {
            cursor->started = true;
            std::string first = "retry: 2000\n\n";
            if (cursor->resume) {
              // Newer than every event here: the daemon restarted and numbers
              // from 1 again, so all it keeps are new to the client.
              const std::uint64_t after =
                  *cursor->resume > self->hub->event_count() ? 0 : *cursor->resume;
              first += events_after(after);
            } else {
              cursor->events = self->hub->event_count();
            }
            const auto held = self->hub->Latest();
            const Published& p = *held;
            cursor->version = p.version;
            const auto leases = self->ReadLeases();
            first +=
                SseMessage(cursor->events, "snapshot",
                           SnapshotDocument(p, self->options.api, leases ? &*leases : nullptr));
            return sink.write(first.data(), first.size());
          }
          if (self->hub->stopped() || self->stopping) return false;
          if (!self->hub->Wait(
                  cursor->version, cursor->events,
                  std::chrono::duration_cast<std::chrono::milliseconds>(self->options.keepalive))) {
            static const std::string kKeepalive = ": keepalive\n\n";
            return sink.write(kKeepalive.data(), kKeepalive.size());
          }
          if (self->hub->stopped() || self->stopping) return false;
          std::string out = events_after(cursor->events);
          const auto held = self->hub->Latest();
          const Published& p = *held;
          if (p.version > cursor->version) {
            cursor->version = p.version;
            const auto leases = self->ReadLeases();
            out += SseMessage(cursor->events, "snapshot",
                              SnapshotDocument(p, self->options.api, leases ? &*leases : nullptr));
          }
          return out.empty() || sink.write(out.data(), out.size());
        },
        [self](bool) { self->streams.fetch_sub(1); });
  });
  auto asset = [&srv](const std::string& path, std::string_view body, const char* type) {
    srv.Get(path, [body, type](const httplib::Request&, httplib::Response& res) {
      res.set_header("Content-Security-Policy",
                     "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
      res.set_content(body.data(), body.size(), type);
    });
  };
  if (web::kDashboardHtml.empty()) {
    asset("/", kNoDashboard, "text/html; charset=utf-8");
  } else {
    // A demo source (said before the first sample) or snapshots that say demo (a recording of
    // the demo fleet).
    srv.Get("/", [self, live = DashboardPage(web::kDashboardHtml, false),
                  demo = DashboardPage(web::kDashboardHtml, true)](const httplib::Request&,
                                                                   httplib::Response& res) {
      const auto held = self->hub->Latest();
      const Published& p = *held;
      const bool is_demo = self->options.demo || (p.snapshot && p.snapshot->demo);
      res.set_header("Content-Security-Policy",
                     "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
      res.set_header("Cache-Control", "no-cache");
      res.set_content(is_demo ? demo : live, "text/html; charset=utf-8");
    });
    asset("/dashboard.js", web::kDashboardJs, "text/javascript; charset=utf-8");
    asset("/dashboard.css", web::kDashboardCss, "text/css; charset=utf-8");
  }

  const int port = options.port == 0
                       ? srv.bind_to_any_port(options.host)
                       : (srv.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port < 0) {
    return Status::Unavailable(
        fmt::format("cannot listen on {}:{} (in use, or not an address of "
                    "this machine)",
                    options.host, options.port));
  }
  s->port_ = port;
  // cpp-httplib 0.11 listens with a backlog of 5, which drops the SYNs of a
  // burst (each costs its client a 1 s retransmit); listen() again on a
  // listening socket raises it (Linux). Done here, before the listening
  // thread exists, so nothing else uses the socket yet.
  if (impl.listen_fd >= 0) ::listen(impl.listen_fd, kListenBacklog);
  s->thread_ = std::thread([self] {
    NameThisThread("gw-http");
    ObserveAccepts(true);
    self->server->listen_after_bind();
  });
  // Stop() only reaches a server that is listening: wait for it.
  for (int i = 0; i < 5000 && !srv.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return s;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (!impl_) return;
  impl_->stopping = true;
  if (impl_->hub) impl_->hub->Wake();
  if (!thread_.joinable()) return;  // never listened (Start failed)
  impl_->server->stop();
  thread_.join();
}

bool HttpServer::tls() const { return impl_ && impl_->options.web.tls(); }

void HttpServer::SetUsers(std::map<std::string, std::string> users) {
  impl_->auth.SetUsers(std::move(users));
}

const AuthStats& HttpServer::auth_stats() const { return impl_->auth.stats(); }

}  // namespace gpuwatch::server
