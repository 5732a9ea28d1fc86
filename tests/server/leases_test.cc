// GPU leases on the server side: the lease series of /metrics (1/0 per GPU
// and MIG device, the queue, who holds what only when opted in), the lease
// keys of the JSON documents, and /api/v1/leases over a real socket reading a
// real lease file, directly or through the daemon's cached reader.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "../backends/fake_env.h"
#include "export/api_documents.h"
#include "export/prometheus.h"
#include "sampler/collect.h"
#include "server/http_server.h"

namespace gpuwatch::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::seconds;
using std::chrono::system_clock;

const system_clock::time_point kNow = system_clock::time_point(seconds(1796033018));
const std::string kGpu0 = "GPU-ba5eb01e-1a44-0730-738a-4f10e71191a1";  // fixed.yaml's GPU 0
const std::string kMig1 = "MIG-11111111-2222-3333-4444-555555555555";  // mig.yaml's gi 1

Snapshot Scenario(const std::string& name) {
  auto backend = testing::OpenFake(name, 100);
  return CollectOnce(*backend, nullptr, CollectOptions{});
}

host::Lease LeaseOn(const std::string& uuid, const std::string& device) {
  host::Lease l;
  l.uuid = uuid;
  l.device = device;
  l.holders = {{4242, 9001}};
  l.user = "alice";
  l.command = "python train.py";
  l.ticket = 12;
  l.since = kNow - seconds(130);
  return l;
}

host::Waiter Waiting(std::uint64_t ticket, seconds waited) {
  host::Waiter w;
  w.ticket = ticket;
  w.holder = {static_cast<std::uint32_t>(5000 + ticket), 1};
  w.user = "bob";
  w.wants = "1 GPU";
  w.since = kNow - waited;
  return w;
}

std::string Render(const Snapshot& s, const std::optional<host::LeaseTable>& leases,
                   MetricsOptions o = {}) {
  MetricsInput in;
  in.snapshot = &s;
  in.hostname = "node1";
  in.leases = leases;
  in.now = kNow;
  return RenderMetrics(in, o);
}

// The value of the one sample of `family` whose labels start with `labels`.
std::string Sample(const std::string& text, const std::string& family, const std::string& labels) {
  const std::regex line("\n" + family + "\\{" + labels + "[^}]*\\} (\\S+)\n");
  std::smatch m;
  return std::regex_search(text, m, line) ? m[1].str() : "absent";
}

TEST(LeaseMetrics, EveryGpuIsLeasedOrNot) {
  host::LeaseTable t;
  t.leases.push_back(LeaseOn(kGpu0, "0"));
  const std::string text = Render(Scenario("fixed.yaml"), t);
  EXPECT_NE(text.find("# HELP gpuwatch_gpu_leased 1 while a job holds the GPU through a lease"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE gpuwatch_gpu_leased gauge\n"), std::string::npos);
  EXPECT_EQ(Sample(text, "gpuwatch_gpu_leased", "gpu=\"0\",uuid=\"" + kGpu0 + "\",pci_bus_id="),
            "1")
      << text;
  EXPECT_EQ(Sample(text, "gpuwatch_gpu_leased", "gpu=\"1\",uuid=\"GPU-3f1c"), "0");
  EXPECT_EQ(Sample(text, "gpuwatch_lease_queue_length", "hostname=\"node1\""), "0");
  EXPECT_EQ(Sample(text, "gpuwatch_lease_queue_wait_seconds", "hostname=\"node1\""), "0");
}

TEST(LeaseMetrics, TheQueueGivesItsLengthAndTheLongestWait) {
  host::LeaseTable t;
  t.queue = {Waiting(13, seconds(65)), Waiting(14, seconds(5))};
  const std::string text = Render(Scenario("fixed.yaml"), t);
  EXPECT_EQ(Sample(text, "gpuwatch_lease_queue_length", "hostname=\"node1\""), "2") << text;
  EXPECT_EQ(Sample(text, "gpuwatch_lease_queue_wait_seconds", "hostname=\"node1\""), "65");
  EXPECT_NE(text.find("# TYPE gpuwatch_lease_queue_wait_seconds gauge\n"), std::string::npos);
}

TEST(LeaseMetrics, WhoHoldsWhatIsOptInAndTheUserOptInAgain) {
  host::LeaseTable t;
  t.leases.push_back(LeaseOn(kGpu0, "0"));
  t.leases.push_back(LeaseOn("GPU-not-on-this-machine", "7"));
  const Snapshot s = Scenario("fixed.yaml");
  const std::string plain = Render(s, t);
  EXPECT_EQ(plain.find("gpuwatch_lease_info"), std::string::npos);
  EXPECT_EQ(plain.find("python train.py"), std::string::npos);
  EXPECT_EQ(plain.find("alice"), std::string::npos);

  MetricsOptions o;
  o.process_metrics = true;
  const std::string with = Render(s, t, o);
  EXPECT_NE(with.find("\ngpuwatch_lease_info{gpu=\"0\",uuid=\"" + kGpu0 +
                      "\",hostname=\"node1\",device=\"0\",pid=\"4242\","
                      "command=\"python train.py\",ticket=\"12\"} 1\n"),
            std::string::npos)
      << with;
  EXPECT_EQ(with.find("alice"), std::string::npos) << "user only with --process-user";
  EXPECT_EQ(with.find("GPU-not-on-this-machine"), std::string::npos)
      << "only the GPUs these metrics describe";
  o.process_user = true;
  EXPECT_NE(Render(s, t, o).find("command=\"python train.py\",ticket=\"12\",user=\"alice\"} 1\n"),
            std::string::npos);
}

TEST(LeaseMetrics, NoLeaseSeriesWhenTheLeasesAreNotRead) {
  const std::string text = Render(Scenario("fixed.yaml"), std::nullopt);
  EXPECT_EQ(text.find("lease"), std::string::npos) << "unknown is not 0";
}

TEST(LeaseMetrics, MigDevicesAreLeasedInTheirOwnFamily) {
  host::LeaseTable t;
  t.leases.push_back(LeaseOn(kMig1, "0:1"));
  const Snapshot s = Scenario("mig.yaml");
  ASSERT_EQ(s.mig_devices.size(), 2u);
  MetricsOptions o;
  o.process_metrics = true;
  const std::string text = Render(s, t, o);
  const std::regex mig1("\ngpuwatch_mig_leased\\{gpu=\"0\",uuid=\"" + kMig1 +
                        "\",[^}]*gpu_instance=\"1\",compute_instance=\"0\"\\} 1\n");
  EXPECT_TRUE(std::regex_search(text, mig1)) << text;
  EXPECT_EQ(Sample(text, "gpuwatch_mig_leased", "gpu=\"0\",uuid=\"MIG-6666"), "0");
  EXPECT_EQ(Sample(text, "gpuwatch_gpu_leased", "gpu=\"0\",uuid=\"GPU-"), "0")
      << "the parent GPU is not leased whole";
  EXPECT_NE(text.find("gpuwatch_lease_info{gpu=\"0\",uuid=\"" + kMig1 +
                      "\",hostname=\"node1\","
                      "device=\"0:1\","),
            std::string::npos);
}

TEST(LeaseMetrics, OpenMetricsTypesTheLeaseInfoAsInfo) {
  host::LeaseTable t;
  t.leases.push_back(LeaseOn(kGpu0, "0"));
  MetricsOptions o;
  o.process_metrics = true;
  o.format = MetricsFormat::kOpenMetrics;
  const std::string text = Render(Scenario("fixed.yaml"), t, o);
  EXPECT_NE(text.find("# TYPE gpuwatch_lease info\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ngpuwatch_lease_info{gpu=\"0\""), std::string::npos);
}

// promtool lints what the golden test does not hold: the lease families,
// with a command that needs escaping.
TEST(LeaseMetrics, PromtoolFindsNoProblem) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) GTEST_SKIP() << "no promtool";
  host::LeaseTable t;
  host::Lease odd = LeaseOn(kGpu0, "0");
  odd.command = "python -c \"import x\\\nprint(1)\"  ünïcode";
  t.leases.push_back(odd);
  t.queue = {Waiting(13, seconds(65))};
  MetricsOptions o;
  o.process_metrics = true;
  o.process_user = true;
  const fs::path dir = fs::temp_directory_path() / ("gw-lease-prom-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "metrics.prom") << Render(Scenario("fixed.yaml"), t, o);
  const std::string cmd = "promtool check metrics < " + (dir / "metrics.prom").string() + " > " +
                          (dir / "out").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream out;
  out << std::ifstream(dir / "out").rdbuf();
  fs::remove_all(dir);
  EXPECT_EQ(rc, 0) << out.str();
  EXPECT_EQ(out.str(), "");
}

Published FixedPublished() {
  Published p;
  p.snapshot = std::make_shared<Snapshot>(Scenario("fixed.yaml"));
  p.version = 1;
  return p;
}

TEST(LeaseApi, DevicesCarryTheirLeaseOrNull) {
  host::LeaseTable t;
  t.leases.push_back(LeaseOn(kGpu0, "0"));
  t.queue = {Waiting(13, seconds(65))};
  const LeaseRead read = t;
  const Published p = FixedPublished();
  const json snap = SnapshotDocument(p, {}, &read);
  EXPECT_EQ(snap["devices"][0]["lease"]["pid"], 4242);
  EXPECT_EQ(snap["devices"][0]["lease"]["ticket"], 12);
  EXPECT_EQ(snap["devices"][0]["lease"]["since"], "2026-11-30T10:01:28.000Z");
  EXPECT_TRUE(snap["devices"][1]["lease"].is_null());
  EXPECT_EQ(snap["lease_queue"][0]["ticket"], 13);
  EXPECT_TRUE(snap["lease_error"].is_null());
  const json devices = DevicesDocument(p, &read);
  EXPECT_EQ(devices["devices"][0]["lease"]["user"], "alice");
  EXPECT_TRUE(devices["devices"][1]["lease"].is_null());

  EXPECT_FALSE(SnapshotDocument(p, {})["devices"][0].contains("lease"))
      << "a server that reads no leases says nothing about them";
  EXPECT_FALSE(DevicesDocument(p)["devices"][0].contains("lease"));
}

TEST(LeaseApi, AnUnreadableLeaseFileIsReportedNotShownAsFree) {
  const LeaseRead read = Status::InvalidArgument("/run/gw/leases.json: leases[0].uuid: missing");
  const Published p = FixedPublished();
  const json snap = SnapshotDocument(p, {}, &read);
  EXPECT_EQ(snap["lease_error"], "/run/gw/leases.json: leases[0].uuid: missing");
  EXPECT_TRUE(snap["devices"][0]["lease"].is_null());
  EXPECT_EQ(DevicesDocument(p, &read)["lease_error"],
            "/run/gw/leases.json: leases[0].uuid: missing");
}

TEST(LeaseApi, TheLeasesDocumentHoldsEveryLeaseAndTheQueue) {
  host::LeaseTable t;
  t.leases.push_back(LeaseOn(kGpu0, "0"));
  t.leases.push_back(LeaseOn(kMig1, "5:1"));
  t.queue = {Waiting(13, seconds(65)), Waiting(14, seconds(5))};
  const json doc = LeasesDocument(t);
  EXPECT_EQ(doc["schema"], "gpuwatch.api/1");
  ASSERT_EQ(doc["leases"].size(), 2u);
  EXPECT_EQ(doc["leases"][1]["device"], "5:1");
  EXPECT_EQ(doc["leases"][1]["uuid"], kMig1);
  EXPECT_EQ(doc["leases"][0]["holders"], json::parse(R"([{"pid": 4242, "start_ticks": 9001}])"));
  ASSERT_EQ(doc["queue"].size(), 2u);
  EXPECT_EQ(doc["queue"][1]["position"], 2);
  EXPECT_EQ(doc["queue"][1]["pid"], 5014);
}

// /api/v1/leases and /metrics through a real server reading a real lease
// file, whose holder is this test process.
class LeaseHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gw-lease-http-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Start(LeaseSource leases) {
    HttpOptions o;
    o.port = 0;
    o.api.hostname = "node1";
    o.leases = std::move(leases);
    auto s = HttpServer::Start(o, hub_);
    ASSERT_TRUE(s) << s.error().message();
    server_ = std::move(*s);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
    hub_->Publish(std::make_shared<Snapshot>(Scenario("fixed.yaml")), {}, {}, {});
  }
  host::LeaseBook Book() const { return host::LeaseBook(dir_, host::ProcessLiveness("/proc")); }
  fs::path dir_;
  std::shared_ptr<Hub> hub_ = std::make_shared<Hub>();
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(LeaseHttp, ServesTheLeaseFileAsItIsAtEachRequest) {
  Start([book = Book()] { return book.Read(); });
  auto empty = client_->Get("/api/v1/leases");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->status, 200);
  EXPECT_EQ(json::parse(empty->body)["leases"], json::array()) << "no file yet: nothing leased";

  auto me = host::ProcessLiveness("/proc").Identify(static_cast<std::uint32_t>(getpid()));
  ASSERT_TRUE(me) << me.error().message();
  ASSERT_TRUE(Book()
                  .Update([&](host::LeaseTable& t) {
                    host::Lease l = LeaseOn(kGpu0, "0");
                    l.holders = {*me};
                    l.ticket = t.next_ticket++;
                    t.leases.push_back(l);
                  })
                  .ok());
  auto leases = client_->Get("/api/v1/leases");
  ASSERT_TRUE(leases);
  EXPECT_EQ(leases->status, 200);
  const json doc = json::parse(leases->body);
  ASSERT_EQ(doc["leases"].size(), 1u) << leases->body;
  EXPECT_EQ(doc["leases"][0]["pid"], getpid());
  EXPECT_EQ(doc["leases"][0]["uuid"], kGpu0);
  const json snap = json::parse(client_->Get("/api/v1/snapshot")->body);
  EXPECT_EQ(snap["devices"][0]["lease"]["pid"], getpid());
  const std::string metrics = client_->Get("/metrics")->body;
  EXPECT_EQ(Sample(metrics, "gpuwatch_gpu_leased", "gpu=\"0\""), "1") << metrics;
  EXPECT_EQ(Sample(metrics, "gpuwatch_gpu_leased", "gpu=\"1\""), "0");

  ASSERT_TRUE(Book().Update([](host::LeaseTable& t) { t.leases.clear(); }).ok());
  EXPECT_EQ(Sample(client_->Get("/metrics")->body, "gpuwatch_gpu_leased", "gpu=\"0\""), "0")
      << "given back: the next scrape knows";
}

TEST_F(LeaseHttp, AnUnreadableFileIs503AndLeavesTheLeaseSeriesOut) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "leases.json") << "{not json";
  Start([book = Book()] { return book.Read(); });
  auto leases = client_->Get("/api/v1/leases");
  ASSERT_TRUE(leases);
  EXPECT_EQ(leases->status, 503);
  EXPECT_NE(leases->body.find((dir_ / "leases.json").string()), std::string::npos)
      << "names the file: " << leases->body;
  const std::string metrics = client_->Get("/metrics")->body;
  EXPECT_EQ(metrics.find("gpuwatch_gpu_leased"), std::string::npos);
  EXPECT_NE(metrics.find("gpuwatch_memory_used_bytes"), std::string::npos) << "the rest stays";
  const json snap = json::parse(client_->Get("/api/v1/snapshot")->body);
  EXPECT_NE(snap["lease_error"].get<std::string>().find("leases.json"), std::string::npos);
}

// As `gpuwatch serve` wires it: one parse per change of the file, however
// many scrapes, and a change is seen at the next one.
TEST_F(LeaseHttp, ScrapesOfAnUnchangedFileParseItOnce) {
  auto me = host::ProcessLiveness("/proc").Identify(static_cast<std::uint32_t>(getpid()));
  ASSERT_TRUE(me) << me.error().message();
  ASSERT_TRUE(Book()
                  .Update([&](host::LeaseTable& t) {
                    host::Lease l = LeaseOn(kGpu0, "0");
                    l.holders = {*me};
                    t.leases.push_back(l);
                  })
                  .ok());
  auto cache = std::make_shared<host::LeaseCache>(Book(), nullptr, std::chrono::nanoseconds(0));
  Start([cache] { return cache->Read(); });
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(Sample(client_->Get("/metrics")->body, "gpuwatch_gpu_leased", "gpu=\"0\""), "1");
    ASSERT_EQ(json::parse(client_->Get("/api/v1/leases")->body)["leases"].size(), 1u);
  }
  EXPECT_EQ(cache->loads(), 1u) << "20 requests, one parse";
  ASSERT_TRUE(Book().Update([](host::LeaseTable& t) { t.leases.clear(); }).ok());
  EXPECT_EQ(Sample(client_->Get("/metrics")->body, "gpuwatch_gpu_leased", "gpu=\"0\""), "0");
  EXPECT_EQ(cache->loads(), 2u);
}

TEST_F(LeaseHttp, AnOversizedFileIs503NamingTheBound) {
  fs::create_directories(dir_);
  { std::ofstream(dir_ / "leases.json") << "{"; }
  fs::resize_file(dir_ / "leases.json", 26'000'000);
  auto cache = std::make_shared<host::LeaseCache>(Book());
  Start([cache] { return cache->Read(); });
  auto leases = client_->Get("/api/v1/leases");
  ASSERT_TRUE(leases);
  EXPECT_EQ(leases->status, 503);
  EXPECT_NE(leases->body.find("leases.json: lease file: 26000000 bytes, more than the 1048576 "
                              "(1 MiB) a lease file may hold"),
            std::string::npos)
      << leases->body;
  EXPECT_EQ(client_->Get("/metrics")->body.find("gpuwatch_gpu_leased"), std::string::npos);
}

TEST_F(LeaseHttp, WithoutALeaseSourceTheEndpointIsNotThere) {
  Start(nullptr);
  auto leases = client_->Get("/api/v1/leases");
  ASSERT_TRUE(leases);
  EXPECT_EQ(leases->status, 404);
  EXPECT_EQ(client_->Get("/metrics")->body.find("lease"), std::string::npos);
}

}  // namespace
}  // namespace gpuwatch::server
