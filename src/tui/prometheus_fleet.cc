#include "tui/prometheus_fleet.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/printable.h"
#include "tui/connect_reason.h"

namespace gpuwatch::tui {
namespace {

using Clock = std::chrono::system_clock;
constexpr std::string_view kBuildInfo = "gpuwatch_exporter_build_info";

// Series the view reads that are not catalogue rows (without the prefix).
constexpr std::string_view kOtherSeries =
    "gpu_up|gpu_info|mig_info|gpu_leased|mig_leased|lease_info|alert_active|leak_suspected|"
    "oom_forecast|leak_rate_bytes_per_second|time_to_oom_seconds|process_preallocated|"
    "framework_memory_bytes|exporter_sampler_hung|exporter_last_sample_age_seconds|"
    "exporter_sample_duration_seconds";

// {__name__=~"gpuwatch_((mig_)?(memory_used_bytes|...)|gpu_up|...)"} plus `extra` matchers.
std::string ValuesSelector(const std::string& extra) {
  std::string fields;
  for (const FieldInfo& f : Catalogue()) {
    if (f.prom_name.empty() || f.kind == Kind::kInfo) continue;
    fmt::format_to(std::back_inserter(fields), "{}{}", fields.empty() ? "" : "|",
                   f.prom_name.substr(kSeriesPrefix.size()));
  }
  return fmt::format("{{__name__=~\"gpuwatch_((mig_)?({})|{})\"{}}}", fields, kOtherSeries, extra);
}

// `values` as one PromQL string literal of an anchored regex matching any of them.
std::string AnyOf(const std::vector<std::string>& values) {
  std::string regex;
  for (const std::string& v : values) {
    if (!regex.empty()) regex += '|';
    for (char c : v) {
      if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) regex += '\\';
      regex += c;
    }
  }
  std::string literal = "\"";
  for (char c : regex) {
    if (c == '\\' || c == '"') literal += '\\';
    literal += c;
  }
  return literal + '"';
}

// `url` with the password of its userinfo, if any, as ***.
std::string Redacted(std::string_view url) {
  const std::size_t scheme = url.find("://");
  const std::size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  const std::size_t at = url.find('@', start), colon = url.find(':', start);
  if (at == std::string_view::npos || at > url.find('/', start) || colon > at) {
    return std::string(url);
  }
  return fmt::format("{}***{}", url.substr(0, colon + 1), url.substr(at));
}

}  // namespace

Result<PrometheusSource> ParsePrometheusUrl(std::string_view url) {
  const auto bad = [&](std::string_view what) {
    return Status::InvalidArgument(
        fmt::format("Prometheus URL \"{}\": {}", Printable(Redacted(url)), what));
  };
  if (url.empty()) return bad("empty (give e.g. http://prometheus:9090)");
  std::string_view scheme = "http", rest = url;
  if (auto p = url.find("://"); p != std::string_view::npos) {
    scheme = url.substr(0, p);
    rest = url.substr(p + 3);
  }
  if (scheme != "http" && scheme != "https") return bad("the scheme must be http or https");
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
  if (scheme == "https") return bad("this build has no TLS support; use http://");
#endif
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return bad("give the server's base URL, without a query or fragment");
  }
  for (char c : rest) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
      return bad("has a space or control character");
  }
  std::string_view authority = rest.substr(0, rest.find('/'));
  std::string path(rest.substr(authority.size()));
  while (path.ends_with('/')) path.pop_back();
  if (path.find("/api/") != std::string::npos) {
    return bad("give the server's base URL, not an API path");
  }
  PrometheusSource s;
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    auto colon = userinfo.find(':');
    s.user = std::string(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) s.password = std::string(userinfo.substr(colon + 1));
  }
  std::string_view host = authority, port;
  if (authority.starts_with('[')) {  // [IPv6]:port
    auto close = authority.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 address needs its closing ]");
    host = authority.substr(0, close + 1);
    port = authority.substr(close + 1);
    if (!port.empty() && !port.starts_with(':')) return bad("junk after the IPv6 address");
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon);
  }
  if (host.empty() || host == "[]") return bad("no host");
  if (!port.empty()) {
    const auto n = WholeLong(port.substr(1));
    if (!n || *n < 1 || *n > 65535) return bad("the port must be a number from 1 to 65535");
  }
  s.url = fmt::format("{}://{}{}{}", scheme, host, port, path);
  return s;
}

namespace {

// "http://host:9090" -> host, 9090; "https://[::1]" -> ::1, 443.
std::pair<std::string, int> HostAndPort(std::string_view origin) {
  const bool tls = origin.starts_with("https://");
  std::string_view rest = origin.substr(origin.find("://") + 3);
  int port = tls ? 443 : 80;
  std::string_view host = rest;
  const std::size_t close = rest.rfind(']');
  const std::size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && (close == std::string_view::npos || colon > close)) {
    host = rest.substr(0, colon);
    std::from_chars(rest.data() + colon + 1, rest.data() + rest.size(), port);
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return {std::string(host), port};
}

}  // namespace

Result<std::vector<HostState>> FetchFleet(const PrometheusSource& source) {
  const std::size_t scheme_end = source.url.find("://");
  const std::size_t path_start =
      scheme_end == std::string::npos ? std::string::npos : source.url.find('/', scheme_end + 3);
  const std::string origin = source.url.substr(0, path_start);
  const std::string path =
      (path_start == std::string::npos ? "" : source.url.substr(path_start)) + "/api/v1/query";
  httplib::Client client(origin);
  if (!client.is_valid()) {
    return Status::InvalidArgument(fmt::format("Prometheus URL {}: not usable", source.url));
  }
  const auto sec = std::chrono::duration_cast<std::chrono::seconds>(source.timeout);
  const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(source.timeout - sec);
  client.set_connection_timeout(sec.count(), usec.count());
  client.set_read_timeout(sec.count(), usec.count());
  client.set_write_timeout(sec.count(), usec.count());
  client.set_keep_alive(true);  // one connection for the round
  client.set_tcp_nodelay(true);
  if (!source.user.empty() || !source.password.empty()) {
    client.set_basic_auth(source.user, source.password);
  }
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
  if (!source.ca_file.empty()) client.set_ca_cert_path(source.ca_file);
  client.enable_server_certificate_verification(!source.insecure);
#endif
  const std::string where = source.url + "/api/v1/query";
  const auto query = [&](const std::string& promql) -> Result<std::vector<PromSample>> {
    // POST: the selector of V is longer than some proxies allow in a URL.
    auto res = client.Post(path, httplib::Headers{{"Accept", "application/json"}},
                           httplib::Params{{"query", promql}});
    if (!res) {
      std::string why = httplib::to_string(res.error());
      if (res.error() == httplib::Error::Connection) {
        const auto [host, port] = HostAndPort(origin);
        if (std::string w = WhyNoConnection(host, port, source.timeout); !w.empty()) why = w;
      }
      return Status::Unavailable(fmt::format("Prometheus at {} unreachable: {}", source.url, why));
    }
    if (res->status == 401 || res->status == 403) {
      return Status::PermissionDenied(
          fmt::format("Prometheus at {}: HTTP {} {} (check the user and password)", source.url,
                      res->status, res->status == 401 ? "Unauthorized" : "Forbidden"));
    }
    auto samples = ParseQueryAnswer(res->body);
    if (!samples) {
      const Status s =
          samples.error().WithContext(fmt::format("POST {}: HTTP {}", where, res->status));
      return res->status == 503 ? Status::Unavailable(s.message()) : s;
    }
    if (res->status != 200) {
      return Status::InvalidArgument(fmt::format("POST {}: HTTP {}", where, res->status));
    }
    return samples;
  };
  FleetAnswers a;
  a.now = Clock::now();
  const std::string window = fmt::format("[{}m]", kSeenWindow.count());
  for (auto [promql, into] : {
           std::pair{ValuesSelector(""), &a.values},
           std::pair{fmt::format("count_over_time({}{})", kBuildInfo, window), &a.seen},
           std::pair{fmt::format("timestamp({})", kBuildInfo), &a.newest},
           std::pair{
               fmt::format("up and on(instance, job) count_over_time({}{})", kBuildInfo, window),
               &a.up},
       }) {
    auto r = query(promql);
    if (!r) return r.error();
    *into = std::move(*r);
  }
  if (const std::vector<std::string> down = HostsWithoutLiveSeries(a); !down.empty()) {
    const std::string by_host = ",hostname=~" + AnyOf(down);
    auto last = query(fmt::format("last_over_time({}{})", ValuesSelector(by_host), window));
    if (!last) return last.error();
    a.last_values = std::move(*last);
    auto seen = query(fmt::format("{}{{{}}}{}", kBuildInfo, by_host.substr(1), window));
    if (!seen) return seen.error();
    a.last_seen = std::move(*seen);
  }
  return FleetFromQueryResults(a);
}

}  // namespace gpuwatch::tui
