// The answers of `gpuwatch serve` (server_impl.h): /metrics from the cached
// head and the live tail, the probes, the /api/v1 documents, the dashboard.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>

#include "core/driver_calls.h"
#include "server/server_impl.h"
#include "webassets/web_assets.h"

namespace gpuwatch::server {
namespace {

using nlohmann::json;

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

// Unix seconds as the clock's time, held within what its nanoseconds reach
// (1677-2262): a parameter may say 1e11 (NumberParam's bound), which as
// nanoseconds would overflow; past the clock's ends means "always".
std::chrono::system_clock::time_point FromUnix(double s) {
  using Clock = std::chrono::system_clock;
  const double reach =
      std::chrono::duration<double>(Clock::duration::max()).count() * 0.999;  // not at the edge
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::clamp(s, -reach, reach))));
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

void AddRoutes(HttpServer::Impl& impl) {
  httplib::Server& srv = *impl.server;
  HttpServer::Impl* self = &impl;
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
      published.nvml_errors = p.nvml_errors;
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
}

}  // namespace gpuwatch::server
