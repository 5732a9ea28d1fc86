// HttpServer: cpp-httplib set up as serve wants it (TLS from the web config,
// admission, keep-alive, timeouts, the listening socket), the request gate
// and the routes added (server_impl.h names the files), and its thread.
#include "server/http_server.h"

#include <fmt/format.h>
#include <openssl/ssl.h>

#include <charconv>
#include <chrono>
#include <memory>
#include <thread>

#include "core/thread_name.h"
#include "server/host_names.h"
#include "server/server_impl.h"

namespace gpuwatch::server {

using nlohmann::json;

void SendJson(httplib::Response& res, const json& body, int status) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  SendJson(res, json{{"error", message}}, status);
}

namespace {

constexpr int kListenBacklog = 1024;

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

  srv.set_pre_routing_handler([self](const httplib::Request& req, httplib::Response& res) {
    return CheckRequest(*self, req, res);
  });
  AddRoutes(impl);
  AddStreamRoute(impl);

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
