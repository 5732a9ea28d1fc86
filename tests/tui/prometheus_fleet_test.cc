// `top --prometheus`: the URL parser; canned /api/v1/query answers turned
// into hosts (values mapped through the catalogue, down targets, stale
// samples, last values kept); servers that are not Prometheus, refuse the
// credentials or do not answer (in-process, on ports the kernel picks); and,
// with Debian's prometheus, a real Prometheus scraping two real
// `gpuwatch serve` daemons, one of which is then killed
// (prometheus_fleet_live_test.cc). The in-process servers listen on ports the
// kernel picks.
#include "tui/prometheus_fleet.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <mutex>
#include <thread>

namespace gpuwatch::tui {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

// --- ParsePrometheusUrl -------------------------------------------------------

TEST(ParsePrometheusUrl, KeepsSchemeHostPortAndPrefix) {
  auto s = ParsePrometheusUrl("https://prom.example:9090/prometheus/");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->url, "https://prom.example:9090/prometheus");
  EXPECT_EQ(s->user, "");
  EXPECT_EQ(ParsePrometheusUrl("http://[::1]:9090")->url, "http://[::1]:9090");
  EXPECT_EQ(ParsePrometheusUrl("127.0.0.1:9090")->url, "http://127.0.0.1:9090");
}

TEST(ParsePrometheusUrl, MovesUserinfoToBasicAuth) {
  auto s = ParsePrometheusUrl("http://alice:s3:cret@prom:9090");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->url, "http://prom:9090");  // shown on screen: no password in it
  EXPECT_EQ(s->user, "alice");
  EXPECT_EQ(s->password, "s3:cret");
}

TEST(ParsePrometheusUrl, RefusesBadUrlsNamingThemAndWhy) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "empty"},
      {"ftp://prom:9090", "scheme must be http or https"},
      {"http://:9090", "no host"},
      {"http://prom:99999", "port must be a number"},
      {"http://prom:90x", "port must be a number"},
      {"http://prom:9090/api/v1/query", "not an API path"},
      {"http://prom:9090/?query=up", "without a query"},
      {"http://prom 9090", "space or control character"},
      {"http://[::1:9090", "closing ]"},
  };
  for (const auto& [url, why] : cases) {
    auto s = ParsePrometheusUrl(url);
    ASSERT_FALSE(s) << url;
    EXPECT_EQ(s.error().code(), Status::Code::kInvalidArgument) << url;
    EXPECT_THAT(s.error().message(), HasSubstr("\"" + url + "\"")) << url;
    EXPECT_THAT(s.error().message(), HasSubstr(why)) << url;
  }
}

TEST(ParsePrometheusUrl, NeverShowsThePasswordInAnError) {
  auto s = ParsePrometheusUrl("http://alice:secret@prom:99999");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message(), HasSubstr("\"http://alice:***@prom:99999\""));
  EXPECT_THAT(s.error().message(), Not(HasSubstr("secret")));
}

// --- ParseQueryAnswer ----------------------------------------------------------

TEST(ParseQueryAnswer, ReadsVectorsMatricesAndSpecialValues) {
  auto v = ParseQueryAnswer(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"__name__":"up","instance":"a:1"},"value":[1700000000.5,"1"]},
    {"metric":{"instance":"b:1"},"value":[1700000000.5,"+Inf"]},
    {"metric":{"instance":"c:1"},"value":[1700000000.5,"NaN"]}]}})");
  ASSERT_TRUE(v) << v.error().message();
  ASSERT_EQ(v->size(), 3u);
  EXPECT_EQ((*v)[0].labels.at("__name__"), "up");
  EXPECT_EQ((*v)[0].value, 1);
  EXPECT_EQ((*v)[0].time, std::chrono::system_clock::time_point(1700000000500ms));
  EXPECT_TRUE(std::isinf((*v)[1].value));
  EXPECT_TRUE(std::isnan((*v)[2].value));
  auto m = ParseQueryAnswer(R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"hostname":"h"},"values":[[1700000000,"1"],[1700000001.25,"2"]]}]}})");
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].value, 2);  // the newest sample, at its own time
  EXPECT_EQ((*m)[0].time, std::chrono::system_clock::time_point(1700000001250ms));
}

TEST(ParseQueryAnswer, SaysPrometheusErrorsAndWhatIsNotPrometheus) {
  auto e = ParseQueryAnswer(
      R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message(), "Prometheus says bad_data: parse error at char 3");
  for (std::string body : {"<html><body>Grafana</body></html>", R"({"devices":[]})",
                           R"({"status":"success","data":{"resultType":"vector"}})", ""}) {
    auto r = ParseQueryAnswer(body);
    ASSERT_FALSE(r) << body;
    EXPECT_THAT(r.error().message(), HasSubstr("not a Prometheus API answer")) << body;
  }
}

// --- FleetFromQueryResults on canned answers ------------------------------------

constexpr double kEval = 1700000100;

std::vector<PromSample> Vector(const std::string& result) {
  auto r = ParseQueryAnswer(R"({"status":"success","data":{"resultType":"vector","result":[)" +
                            result + "]}}");
  EXPECT_TRUE(r) << r.error().message();
  return r ? *r : std::vector<PromSample>{};
}

// One series of node-a (instance 10.0.0.1:9835) at kEval.
std::string A(const std::string& name, const std::string& labels, const std::string& value) {
  return R"({"metric":{"__name__":")" + name +
         R"(","hostname":"node-a","instance":"10.0.0.1:9835","job":"gpuwatch")" +
         (labels.empty() ? "" : "," + labels) + R"(},"value":[1700000100,")" + value + "\"]}";
}

const std::string kGpu0 =
    R"("gpu":"0","uuid":"GPU-a0","pci_bus_id":"00000000:18:00.0","model":"NVIDIA H200")";
const std::string kGpu1 =
    R"("gpu":"1","uuid":"GPU-a1","pci_bus_id":"00000000:2A:00.0","model":"NVIDIA H200")";
const std::string kPid = R"("gpu":"0","uuid":"GPU-a0","pid":"41001","command":"python")";

// node-a answers; node-b (10.0.0.2:9835) is down: up 0, only last values.
FleetAnswers Canned() {
  FleetAnswers a;
  a.now = std::chrono::system_clock::time_point(1700000100s);
  a.values = Vector(
      A("gpuwatch_gpu_info", kGpu0 + R"(,"serial":"1654","compute_capability":"9.0")", "1") + "," +
      A("gpuwatch_gpu_up", kGpu0, "1") + "," + A("gpuwatch_gpu_up", kGpu1, "0") + "," +
      A("gpuwatch_memory_used_bytes", kGpu0, "1000000000") + "," +
      A("gpuwatch_memory_total_bytes", kGpu0, "150000000000") + "," +
      A("gpuwatch_utilization_ratio", kGpu0, "0.5") + "," +
      A("gpuwatch_temperature_celsius", kGpu0, "55") + "," +
      A("gpuwatch_power_watts", kGpu0, "300.5") + "," +
      A("gpuwatch_energy_joules_total", kGpu0, "123456") + "," + A("gpuwatch_devices", "", "2") +
      "," + A("gpuwatch_exporter_last_sample_age_seconds", "", "0.25") + "," +
      A("gpuwatch_exporter_sampler_hung", "", "0") + "," +
      A("gpuwatch_process_memory_used_bytes", kPid + R"(,"user":"alice")", "900000000") + "," +
      A("gpuwatch_process_sm_utilization_ratio", kPid, "0.97") + "," +
      A("gpuwatch_mig_info",
        R"("gpu":"1","uuid":"MIG-1","model":"A100 MIG 3g.40gb","gpu_instance":"2","compute_instance":"0")",
        "1") +
      "," +
      A("gpuwatch_mig_memory_used_bytes",
        R"("gpu":"1","uuid":"MIG-1","gpu_instance":"2","compute_instance":"0")", "4096") +
      "," + A("gpuwatch_alert_active", R"("rule":"gpu_hot","severity":"critical","gpu":"0")", "1") +
      "," + A("gpuwatch_leak_suspected", R"("gpu":"0","scope":"process","pid":"41001")", "1") +
      "," + A("gpuwatch_oom_forecast", R"("gpu":"0","scope":"process","pid":"41001")", "0") + "," +
      A("gpuwatch_leak_rate_bytes_per_second", R"("gpu":"0","scope":"process","pid":"41001")",
        "1048576") +
      "," + A("gpuwatch_leak_suspected", R"("gpu":"0","scope":"device","pid":"")", "0") + "," +
      A("gpuwatch_time_to_oom_seconds", R"("gpu":"0")", "600") + "," +
      A("gpuwatch_process_preallocated", R"("gpu":"0","pid":"41001")", "1") + "," +
      A("gpuwatch_framework_memory_bytes",
        R"("gpu":"0","pid":"41001","framework":"torch","kind":"allocated")", "800000000") +
      "," + A("gpuwatch_gpu_leased", kGpu0, "1") + "," + A("gpuwatch_gpu_leased", kGpu1, "0") +
      "," +
      A("gpuwatch_lease_info",
        R"("gpu":"0","uuid":"GPU-a0","device":"0","pid":"777","command":"sleep 9","ticket":"4","user":"bob")",
        "1"));
  a.seen = Vector(
      R"({"metric":{"hostname":"node-a","instance":"10.0.0.1:9835","job":"gpuwatch","version":"1"},"value":[1700000100,"600"]},
         {"metric":{"hostname":"node-b","instance":"10.0.0.2:9835","job":"gpuwatch","version":"1"},"value":[1700000100,"300"]})");
  a.newest = Vector(
      R"({"metric":{"hostname":"node-a","instance":"10.0.0.1:9835","job":"gpuwatch","version":"1"},"value":[1700000100,"1700000099.5"]})");
  a.up = Vector(
      R"({"metric":{"__name__":"up","instance":"10.0.0.1:9835","job":"gpuwatch"},"value":[1700000100,"1"]},
                   {"metric":{"__name__":"up","instance":"10.0.0.2:9835","job":"gpuwatch"},"value":[1700000100,"0"]})");
  a.last_values = Vector(
      R"({"metric":{"__name__":"gpuwatch_memory_used_bytes","hostname":"node-b","instance":"10.0.0.2:9835","job":"gpuwatch","gpu":"0","uuid":"GPU-b0","model":"NVIDIA L40S"},"value":[1700000100,"7"]})");
  auto seen = ParseQueryAnswer(
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"gpuwatch_exporter_build_info","hostname":"node-b","instance":"10.0.0.2:9835","job":"gpuwatch"},"values":[[1700000000,"1"],[1700000040,"1"]]}]}})");
  a.last_seen = *seen;
  return a;
}

TEST(FleetFromQueryResults, MapsSeriesToCatalogueFieldsPerHostname) {
  auto fleet = FleetFromQueryResults(Canned());
  ASSERT_TRUE(fleet) << fleet.error().message();
  ASSERT_EQ(fleet->size(), 2u);
  const HostState& a = (*fleet)[0];
  EXPECT_EQ(a.label, "node-a");
  EXPECT_EQ(a.hostname, "node-a");
  EXPECT_EQ(a.down, "");
  EXPECT_EQ(a.updated, std::chrono::system_clock::time_point(1700000100s));
  ASSERT_TRUE(a.snapshot);
  const Snapshot& s = *a.snapshot;
  // The daemon sampled 0.25 s before Prometheus scraped at 1700000099.5.
  EXPECT_EQ(s.time, std::chrono::system_clock::time_point(1700000099250ms));
  EXPECT_FALSE(s.stale);
  EXPECT_EQ(s.source, "prometheus:10.0.0.1:9835");
  EXPECT_EQ(s.host[FieldId::kDeviceCount].number(), 2);
  ASSERT_EQ(s.devices.size(), 2u);
  const DeviceSample& d = s.devices[0];
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.health, DeviceHealth::kOk);
  EXPECT_EQ(d.fields[FieldId::kName].text(), "NVIDIA H200");
  EXPECT_EQ(d.fields[FieldId::kUuid].text(), "GPU-a0");
  EXPECT_EQ(d.fields[FieldId::kPciBusId].text(), "00000000:18:00.0");
  EXPECT_EQ(d.fields[FieldId::kSerial].text(), "1654");
  EXPECT_EQ(d.fields[FieldId::kComputeCapability].text(), "9.0");
  EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].number(), 1e9);
  EXPECT_EQ(d.fields[FieldId::kMemoryTotalBytes].number(), 150e9);
  EXPECT_EQ(d.fields[FieldId::kUtilizationGpuRatio].number(), 0.5);
  EXPECT_EQ(d.fields[FieldId::kTemperatureGpuCelsius].number(), 55);
  EXPECT_EQ(d.fields[FieldId::kPowerDrawWatts].number(), 300.5);
  EXPECT_EQ(d.fields[FieldId::kEnergyJoules].number(), 123456);
  EXPECT_FALSE(d.fields[FieldId::kFanSpeedRatio].ok());  // not exported: absent, never 0
  ASSERT_EQ(d.processes.size(), 1u);
  EXPECT_EQ(d.processes[0].pid, 41001u);
  EXPECT_EQ(d.processes[0].host.name, "python");
  EXPECT_EQ(d.processes[0].host.user, "alice");
  EXPECT_EQ(d.processes[0].fields[FieldId::kProcessUsedMemoryBytes].number(), 9e8);
  EXPECT_EQ(d.processes[0].fields[FieldId::kProcessSmUtilizationRatio].number(), 0.97);
  // gpu_up 0: the GPU is there, failing, without values.
  EXPECT_EQ(s.devices[1].health, DeviceHealth::kError);
  EXPECT_FALSE(s.devices[1].fields[FieldId::kMemoryUsedBytes].ok());
  ASSERT_EQ(s.mig_devices.size(), 1u);
  EXPECT_EQ(s.mig_devices[0].index, 1);
  EXPECT_EQ(s.mig_devices[0].mig_index, 0);
  EXPECT_EQ(s.mig_devices[0].gpu_instance_id, 2u);
  EXPECT_EQ(s.mig_devices[0].fields[FieldId::kUuid].text(), "MIG-1");
  EXPECT_EQ(s.mig_devices[0].fields[FieldId::kMemoryUsedBytes].number(), 4096);

  ASSERT_EQ(a.alerts.size(), 1u);
  EXPECT_EQ(a.alerts[0].rule, "gpu_hot");
  EXPECT_EQ(a.alerts[0].severity, Severity::kCritical);
  EXPECT_EQ(a.alerts[0].gpu, 0);
  ASSERT_EQ(a.leaks.size(), 2u);  // (gpu 0, device) sorts before (gpu 0, process)
  EXPECT_FALSE(a.leaks[0].subject.process);
  EXPECT_EQ(a.leaks[0].time_to_full, std::chrono::seconds(600));
  EXPECT_EQ(a.leaks[0].capacity_bytes, 150e9);
  ASSERT_TRUE(a.leaks[1].subject.process);
  EXPECT_EQ(a.leaks[1].subject.process->pid, 41001u);
  EXPECT_TRUE(a.leaks[1].estimate.suspected);
  EXPECT_FALSE(a.leaks[1].estimate.forecast);
  EXPECT_EQ(a.leaks[1].estimate.rate_mib_per_min(), 60);
  ASSERT_EQ(a.preallocated.size(), 1u);
  EXPECT_EQ(a.preallocated[0].process.pid, 41001u);
  EXPECT_DOUBLE_EQ(a.preallocated[0].share, 0.006);
  ASSERT_EQ(a.framework.size(), 1u);
  EXPECT_EQ(a.framework[0].framework, "torch");
  EXPECT_EQ(a.framework[0].bytes.at("allocated"), 8e8);
  ASSERT_TRUE(a.leases);
  ASSERT_EQ(a.leases->leases.size(), 1u);
  EXPECT_EQ(a.leases->leases[0].uuid, "GPU-a0");
  EXPECT_EQ(a.leases->leases[0].user, "bob");
  EXPECT_EQ(a.leases->leases[0].ticket, 4u);
  ASSERT_EQ(a.leases->leases[0].holders.size(), 1u);
  EXPECT_EQ(a.leases->leases[0].holders[0].pid, 777u);
}

TEST(FleetFromQueryResults, ADownTargetKeepsItsLastValues) {
  auto fleet = FleetFromQueryResults(Canned());
  ASSERT_TRUE(fleet) << fleet.error().message();
  const HostState& b = (*fleet)[1];
  EXPECT_EQ(b.label, "node-b");
  EXPECT_EQ(b.down, "Prometheus: target 10.0.0.2:9835 down");
  ASSERT_TRUE(b.snapshot);
  EXPECT_EQ(b.snapshot->time, std::chrono::system_clock::time_point(1700000040s));
  ASSERT_EQ(b.snapshot->devices.size(), 1u);
  EXPECT_EQ(b.snapshot->devices[0].fields[FieldId::kMemoryUsedBytes].number(), 7);
  EXPECT_EQ(b.snapshot->devices[0].fields[FieldId::kName].text(), "NVIDIA L40S");
  EXPECT_EQ(HostsWithoutLiveSeries(Canned()), std::vector<std::string>{"node-b"});
}

TEST(FleetFromQueryResults, ADownTargetWithoutValuesHasNoSnapshot) {
  FleetAnswers a = Canned();
  a.last_values.clear();
  a.last_seen.clear();
  auto fleet = FleetFromQueryResults(a);
  ASSERT_TRUE(fleet) << fleet.error().message();
  EXPECT_EQ((*fleet)[1].down, "Prometheus: target 10.0.0.2:9835 down");
  EXPECT_FALSE((*fleet)[1].snapshot);
}

TEST(FleetFromQueryResults, ASampleOlderThanAFewScrapeIntervalsIsDown) {
  FleetAnswers a = Canned();
  // 600 samples in 10 min: scraped every second, so 30 s without one is down...
  a.newest[0].value = kEval - 30;
  auto fleet = FleetFromQueryResults(a);
  ASSERT_TRUE(fleet);
  EXPECT_EQ((*fleet)[0].down, "Prometheus: target 10.0.0.1:9835 down");
  ASSERT_TRUE((*fleet)[0].snapshot);  // with what it last had
  EXPECT_EQ((*fleet)[0].snapshot->devices.size(), 2u);
  // ... but 4 s is not, and neither is 30 s for a target scraped every minute.
  a.newest[0].value = kEval - 4;
  EXPECT_EQ((*FleetFromQueryResults(a))[0].down, "");
  a.newest[0].value = kEval - 30;
  a.seen[0].value = 10;
  EXPECT_EQ((*FleetFromQueryResults(a))[0].down, "");
}

TEST(FleetFromQueryResults, AHungSamplerIsStale) {
  FleetAnswers a = Canned();
  for (PromSample& s : a.values) {
    if (s.labels["__name__"] == "gpuwatch_exporter_sampler_hung") s.value = 1;
  }
  EXPECT_TRUE((*FleetFromQueryResults(a))[0].snapshot->stale);
}

TEST(FleetFromQueryResults, NoGpuwatchSeriesIsNotFound) {
  auto fleet = FleetFromQueryResults(FleetAnswers{});
  ASSERT_FALSE(fleet);
  EXPECT_EQ(fleet.error().code(), Status::Code::kNotFound);
  EXPECT_THAT(fleet.error().message(), HasSubstr("gpuwatch serve"));
}

// --- FetchFleet against servers that are not (quite) Prometheus -------------------

// An httplib server on 127.0.0.1, a port the kernel picks, on its own thread.
class FakeServer {
 public:
  explicit FakeServer(httplib::Server::Handler handler) {
    server_.Post(".*", handler);
    server_.Get(".*", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    // Bound means listening: connections wait in the backlog until it accepts.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(FetchFleet, AServerThatIsNotPrometheusSaysSo) {
  for (int status : {200, 404}) {
    FakeServer web([&](const httplib::Request&, httplib::Response& res) {
      res.status = status;
      res.set_content("<html><body>It works!</body></html>", "text/html");
    });
    auto fleet = FetchFleet(*ParsePrometheusUrl(web.url()));
    ASSERT_FALSE(fleet);
    EXPECT_EQ(fleet.error().code(), Status::Code::kInvalidArgument);
    EXPECT_THAT(fleet.error().message(), HasSubstr("not a Prometheus API answer"));
    EXPECT_THAT(fleet.error().message(), HasSubstr(web.url() + "/api/v1/query"));
    EXPECT_THAT(fleet.error().message(), HasSubstr("HTTP " + std::to_string(status)));
  }
}

TEST(FetchFleet, RefusedCredentialsArePermissionDenied) {
  FakeServer guarded([](const httplib::Request&, httplib::Response& res) {
    res.status = 401;
    res.set_header("WWW-Authenticate", "Basic realm=\"prometheus\"");
  });
  auto fleet = FetchFleet(*ParsePrometheusUrl(guarded.url()));
  ASSERT_FALSE(fleet);
  EXPECT_EQ(fleet.error().code(), Status::Code::kPermissionDenied);
  EXPECT_THAT(fleet.error().message(), HasSubstr("HTTP 401 Unauthorized"));
}

TEST(FetchFleet, SendsBasicAuthAndPostsTheQueries) {
  std::vector<std::string> queries, auths;
  std::mutex mu;
  FakeServer prom([&](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard lock(mu);
      queries.push_back(req.get_param_value("query"));
      auths.push_back(req.get_header_value("Authorization"));
    }
    res.set_content(R"({"status":"success","data":{"resultType":"vector","result":[]}})",
                    "application/json");
  });
  auto source = ParsePrometheusUrl("http://alice:secret@" + prom.url().substr(7));
  ASSERT_TRUE(source);
  auto fleet = FetchFleet(*source);
  ASSERT_FALSE(fleet);  // an empty Prometheus: no gpuwatch series
  EXPECT_EQ(fleet.error().code(), Status::Code::kNotFound);
  std::lock_guard lock(mu);
  ASSERT_EQ(queries.size(), 4u);  // a fixed number, whatever the fleet's size
  EXPECT_THAT(queries[0], HasSubstr("memory_used_bytes|"));  // from the catalogue
  EXPECT_THAT(queries[0], HasSubstr("|temperature_celsius|"));
  for (const std::string& a : auths) EXPECT_EQ(a, "Basic YWxpY2U6c2VjcmV0");  // alice:secret
}

TEST(FetchFleet, AsksForTheLastValuesOfHostsWithoutLiveSeriesOnly) {
  std::vector<std::string> queries;
  std::mutex mu;
  FakeServer prom([&](const httplib::Request& req, httplib::Response& res) {
    const std::string q = req.get_param_value("query");
    {
      std::lock_guard lock(mu);
      queries.push_back(q);
    }
    // node.a.example was seen in the last 10 minutes and has no series now.
    const std::string seen =
        R"({"metric":{"hostname":"node.a.example","instance":"10.0.0.1:9835","job":"gpuwatch"},"value":[1700000100,"60"]})";
    res.set_content(
        R"({"status":"success","data":{"resultType":")" +
            std::string(q.starts_with("gpuwatch_exporter_build_info{") ? "matrix" : "vector") +
            R"(","result":[)" + (q.starts_with("count_over_time(") ? seen : "") + "]}}",
        "application/json");
  });
  auto fleet = FetchFleet(*ParsePrometheusUrl(prom.url()));
  ASSERT_TRUE(fleet) << fleet.error().message();
  ASSERT_EQ(fleet->size(), 1u);
  EXPECT_EQ((*fleet)[0].down, "Prometheus: target 10.0.0.1:9835 down");
  EXPECT_FALSE((*fleet)[0].snapshot);
  std::lock_guard lock(mu);
  ASSERT_EQ(queries.size(), 6u);
  EXPECT_THAT(queries[4], ::testing::StartsWith("last_over_time({__name__=~\"gpuwatch_"));
  // The hostname as a regex (dots quoted) in a PromQL string (backslashes doubled).
  EXPECT_THAT(queries[4], HasSubstr(R"(,hostname=~"node\\.a\\.example"})"));
  EXPECT_EQ(queries[5], R"(gpuwatch_exporter_build_info{hostname=~"node\\.a\\.example"}[10m])");
}

TEST(FetchFleet, AnUnreachableServerIsUnavailable) {
  // A port that is bound but does not listen refuses connections.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  auto fleet = FetchFleet(*ParsePrometheusUrl(url));
  close(fd);
  ASSERT_FALSE(fleet);
  EXPECT_EQ(fleet.error().code(), Status::Code::kUnavailable);
  EXPECT_THAT(fleet.error().message(), HasSubstr("Prometheus at " + url + " unreachable"));
}

}  // namespace
}  // namespace gpuwatch::tui
