// `gpuwatch top --prometheus URL`: the fleet as a Prometheus server sees it,
// when it scrapes every node's `gpuwatch serve` /metrics. One round is a few
// instant queries (/api/v1/query), each answering for every host at once, so
// the number of requests does not grow with the fleet (their answers do: one
// series per GPU and field). Series are mapped back to catalogue fields by
// their Prometheus names (src/core/catalogue.cc) and grouped by the
// `hostname` label that gpuwatch puts on every series (docs/metrics.md).
//
// FetchFleet holds no state and opens its own connection: any thread may call
// it, and calls may overlap. The parsing is pure (ParseQueryAnswer,
// FleetFromQueryResults) and tested on canned answers.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuwatch/status.h"
#include "tui/host_view.h"

namespace gpuwatch::tui {

// What the parts (the queries, prometheus_fleet.cc; the answers,
// prometheus_answer.cc; the series, prometheus_series.cc) agree on: every
// gpuwatch series' name prefix, how far back a host counts as seen, the
// integer a label or port is (nullopt unless all of `s` is one), and a
// Prometheus time (seconds since the epoch) to the millisecond (not finite:
// the epoch).
inline constexpr std::string_view kSeriesPrefix = "gpuwatch_";
inline constexpr std::chrono::minutes kSeenWindow{10};
std::optional<long> WholeLong(std::string_view s);
std::chrono::system_clock::time_point PromTime(double seconds);

struct PrometheusSource {
  std::string url;             // base, e.g. "http://127.0.0.1:9090" (https allowed), no userinfo
  std::string user, password;  // basic auth, optional
  std::string ca_file;         // PEM bundle that signs the server's certificate ("": the system's)
  bool insecure = false;       // https without checking the certificate
  std::chrono::milliseconds timeout{3000};  // connect, and each read or write of one query
};

// "http://host:9090", "https://user:pass@host/prefix" (user and password go
// to the basic auth fields), or "host:9090" (http). A query, fragment or API
// path in it, an unknown scheme, an empty host or a bad port ->
// InvalidArgument naming the URL and what is wrong.
Result<PrometheusSource> ParsePrometheusUrl(std::string_view url);

// One series of an /api/v1/query answer: its labels (__name__ included when
// the query keeps it), its value, and when: the evaluation time of an
// instant vector, the newest sample of a range vector (a matrix).
struct PromSample {
  std::map<std::string, std::string> labels;
  double value = 0;  // NaN and ±Inf as Prometheus writes them
  std::chrono::system_clock::time_point time;
};

// The body of an /api/v1/query answer. Prometheus's own error
// ({"status":"error"}) -> InvalidArgument with its errorType and error;
// anything else that is not its JSON envelope -> InvalidArgument
// "not a Prometheus API answer: ...".
Result<std::vector<PromSample>> ParseQueryAnswer(std::string_view body);

// The answers of one round, as FetchFleet asks them (B is
// gpuwatch_exporter_build_info, which every gpuwatch serve exports, and V the
// series the view reads: {__name__=~"gpuwatch_(...)"} built from the
// catalogue, plus gpu_up, gpu_info, MIG, alerts, leaks, leases):
struct FleetAnswers {
  std::vector<PromSample> values;  // V: every live host's series
  std::vector<PromSample> seen;    // count_over_time(B[10m]): every host lately, its sample count
  std::vector<PromSample> newest;  // timestamp(B): each live host's newest sample time
  std::vector<PromSample> up;      // up, of the targets that exported B lately
  // Only for the hosts of `seen` with no series in `values` (their target is
  // down: Prometheus marked the series stale):
  std::vector<PromSample> last_values;        // last_over_time(V{hostname=~...}[10m])
  std::vector<PromSample> last_seen;          // B{hostname=~...}[10m]: their newest sample
  std::chrono::system_clock::time_point now;  // when the round ran: HostState::updated
};

// The hosts of `answers`, by hostname (the instance for series without one).
// A host is down ("Prometheus: target <instance> down") when its target's
// `up` is 0, when it has no live series, or when its newest sample is older
// than 4 scrape intervals (estimated from `seen`; at least 5 s); it then keeps
// the last values Prometheus holds of it, if any. No gpuwatch series at all
// -> NotFound saying so.
Result<std::vector<HostState>> FleetFromQueryResults(const FleetAnswers& answers);

// The hosts of `answers.seen` that have no series in `answers.values`: those
// whose last values FetchFleet asks for.
std::vector<std::string> HostsWithoutLiveSeries(const FleetAnswers& answers);

// One round against source.url + "/api/v1/query". Prometheus unreachable ->
// Unavailable; 401 / 403 -> PermissionDenied; an answer that is not
// Prometheus's -> InvalidArgument; each naming the URL and the reason.
Result<std::vector<HostState>> FetchFleet(const PrometheusSource& source);

}  // namespace gpuwatch::tui
