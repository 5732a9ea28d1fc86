// The HTTP side on a real socket (loopback, a port the kernel picks) with a
// real client: routes and status codes, read-only methods, readiness, the
// JSON API, Server-Sent Events, the cap on streams, oversized requests.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <functional>
#include <future>
#include <thread>

#include "../backends/fake_env.h"
#include "sampler/collect.h"
#include "server/http_server.h"

namespace gpuwatch::server {
namespace {

using nlohmann::json;

std::shared_ptr<const Snapshot> FixedSnapshot() {
  auto backend = testing::OpenFake("fixed.yaml", 100);
  auto s = std::make_shared<Snapshot>(CollectOnce(*backend, nullptr, CollectOptions{}));
  s->sequence = 1;
  return s;
}

class Http : public ::testing::Test {
 protected:
  void Start(int max_streams = 8, bool demo = false) {
    HttpOptions o;
    o.port = 0;
    o.demo = demo;
    o.api.hostname = "node1";
    o.version = "test";
    o.max_streams = max_streams;
    o.keepalive = std::chrono::seconds(1);
    o.history = [](const HistoryQuery& q) -> Result<json> {
      if (q.device != 0) return Status::NotFound("no GPU " + std::to_string(q.device));
      return json{{"device", q.device}, {"fields", q.fields.size()}};
    };
    auto s = HttpServer::Start(o, hub_);
    ASSERT_TRUE(s) << s.error().message();
    server_ = std::move(*s);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
  }
  void Publish(std::vector<Event> events = {}) { hub_->Publish(FixedSnapshot(), {}, {}, events); }
  std::shared_ptr<Hub> hub_ = std::make_shared<Hub>();
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(Http, ReadinessFollowsTheFirstSnapshot) {
  Start();
  auto health = client_->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto before = client_->Get("/readyz");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 503);
  EXPECT_NE(before->body.find("starting"), std::string::npos);
  hub_->SetNotReady("NVML: driver not loaded");
  EXPECT_NE(client_->Get("/readyz")->body.find("driver not loaded"), std::string::npos);
  Publish();
  EXPECT_EQ(client_->Get("/readyz")->status, 200);
}

TEST_F(Http, MetricsNegotiatesAndCountsScrapes) {
  Start();
  Publish();
  auto plain = client_->Get("/metrics");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(plain->body.find("gpuwatch_memory_used_bytes{gpu=\"0\""), std::string::npos);
  auto om = client_->Get("/metrics", {{"Accept", "application/openmetrics-text; version=1.0.0"}});
  ASSERT_TRUE(om);
  EXPECT_EQ(om->get_header_value("Content-Type"),
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
  EXPECT_TRUE(om->body.ends_with("# EOF\n"));
  EXPECT_NE(om->body.find("gpuwatch_exporter_scrapes_total{hostname=\"node1\"} 2"),
            std::string::npos);
}

TEST_F(Http, NothingChangesOverHttp) {
  Start();
  for (const char* path : {"/metrics", "/api/v1/snapshot", "/"}) {
    auto post = client_->Post(path, "x", "text/plain");
    ASSERT_TRUE(post) << path;
    EXPECT_EQ(post->status, 405) << path;
    EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
    auto del = client_->Delete(path);
    ASSERT_TRUE(del);
    EXPECT_EQ(del->status, 405);
  }
}

TEST_F(Http, JsonApi) {
  Start();
  Event e;
  e.time = std::chrono::system_clock::time_point(std::chrono::seconds(1000));
  e.kind = Event::Kind::kAlertFiring;
  e.source = "gpu_temperature_high";
  e.message = "hot";
  Publish({e});
  auto snap = client_->Get("/api/v1/snapshot");
  ASSERT_TRUE(snap);
  const json s = json::parse(snap->body);
  EXPECT_EQ(s["schema"], "gpuwatch.api/1");
  EXPECT_EQ(s["hostname"], "node1");
  EXPECT_EQ(s["devices"].size(), 2u);
  EXPECT_TRUE(s["time"].is_number());
  EXPECT_EQ(s["clock_event_reason_names"]["4"], "sw_power_cap");
  EXPECT_EQ(s["diagnoses"], json::array());

  StandingDiagnosis starved{1,
                            "starved",
                            Severity::kWarning,
                            "GPU 1 starved: ...",
                            std::chrono::system_clock::time_point(std::chrono::seconds(900)),
                            ProcessKey{4242, 1}};
  hub_->Publish(FixedSnapshot(), {}, {}, {}, {}, {}, {starved});
  const json d = json::parse(client_->Get("/api/v1/snapshot")->body)["diagnoses"];
  ASSERT_EQ(d.size(), 1u) << d.dump();
  EXPECT_EQ(d[0], (json{{"gpu", 1},
                        {"kind", "starved"},
                        {"severity", "warning"},
                        {"message", "GPU 1 starved: ..."},
                        {"since", 900.0},
                        {"pid", 4242}}));
  EXPECT_EQ(json::parse(client_->Get("/api/v1/devices")->body)["devices"].size(), 2u);
  EXPECT_TRUE(json::parse(client_->Get("/api/v1/processes")->body)["processes"].is_array());
  const json events = json::parse(client_->Get("/api/v1/events?since=0")->body);
  ASSERT_EQ(events["events"].size(), 1u);
  EXPECT_EQ(events["events"][0]["message"], "hot");
  EXPECT_EQ(json::parse(client_->Get("/api/v1/events?since=2000")->body)["events"].size(), 0u);
  // Times past the clock's reach (2262) are "always", not an overflow (found by http_fuzzer).
  EXPECT_EQ(json::parse(client_->Get("/api/v1/events?since=1e11")->body)["events"].size(), 0u);
  EXPECT_EQ(json::parse(client_->Get("/api/v1/events?since=-1e11")->body)["events"].size(), 1u);
  EXPECT_EQ(client_->Get("/api/v1/history?device=0&from=-1e11&to=1e11")->status, 200);

  auto bad = client_->Get("/api/v1/events?since=soon");
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("parameter since: \\\"soon\\\" is not a number"), std::string::npos)
      << bad->body;
  EXPECT_EQ(client_->Get("/api/v1/history?device=0&fields=memory_used_bytes")->status, 200);
  auto missing = client_->Get("/api/v1/history?device=7");
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(missing->body.find("no GPU 7"), std::string::npos);
  auto field = client_->Get("/api/v1/history?fields=memory_used_bytes,nope");
  EXPECT_EQ(field->status, 400);
  EXPECT_NE(field->body.find("\\\"nope\\\" is not a device field"), std::string::npos);
  EXPECT_EQ(client_->Get("/api/v1/history?from=10&to=5")->status, 400);
  // Found by http_fuzzer: times beyond the clock's range were an undefined cast.
  for (const char* path :
       {"/api/v1/events?since=1e308", "/api/v1/events?since=-inf", "/api/v1/history?from=nan",
        "/api/v1/history?to=1e300", "/api/v1/history?device=1e11", "/api/v1/history?device=-1",
        "/api/v1/history?device=0.5", "/api/v1/events?limit=1e300"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path << ": " << r->body;
  }
  EXPECT_EQ(client_->Get("/api/v1/nothing")->status, 404);
}

TEST_F(Http, StreamSendsSnapshotsAndEvents) {
  Start();
  Publish();
  std::string received;
  std::promise<void> got_first;
  std::atomic<bool> first_seen{false};
  std::thread reader([&] {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(10, 0);
    c.Get("/api/v1/stream", [&](const char* data, std::size_t n) {
      received.append(data, n);
      if (!first_seen && received.find("event: snapshot") != std::string::npos) {
        first_seen = true;
        got_first.set_value();
      }
      return received.find("event: event") == std::string::npos;  // stop after an event
    });
  });
  ASSERT_EQ(got_first.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  Event e;
  e.time = std::chrono::system_clock::now();
  e.kind = Event::Kind::kLeakSuspected;
  e.message = "pid 42 leaks";
  Publish({e});
  reader.join();
  EXPECT_NE(received.find("retry: 2000"), std::string::npos);
  EXPECT_NE(received.find("\"message\":\"pid 42 leaks\""), std::string::npos)
      << received.substr(0, 300);
}

// The stream's text until `done` says it has enough (or the server ends it).
std::string ReadStream(int port, const httplib::Headers& headers,
                       const std::function<bool(const std::string&)>& done) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10, 0);
  std::string received;
  c.Get("/api/v1/stream", headers, [&](const char* data, std::size_t n) {
    received.append(data, n);
    return !done(received);
  });
  return received;
}

Event Alert(std::string message) {
  Event e;
  e.time = std::chrono::system_clock::now();
  e.kind = Event::Kind::kAlertFiring;
  e.source = "gpu_hot";
  e.message = std::move(message);
  return e;
}

TEST_F(Http, StreamMessagesCarryTheEventSequenceAsId) {
  Start();
  Publish({Alert("one"), Alert("two")});  // sequences 1 and 2
  // A fresh client gets no old events: the snapshot's id is the newest event's.
  const std::string fresh = ReadStream(server_->port(), {}, [](const std::string& r) {
    return r.find("event: snapshot") != std::string::npos;
  });
  EXPECT_NE(fresh.find("id: 2\nevent: snapshot\ndata: {"), std::string::npos) << fresh;
  EXPECT_EQ(fresh.find("event: event"), std::string::npos) << fresh;
}

TEST_F(Http, StreamReplaysTheEventsAfterLastEventIdBeforeTheSnapshot) {
  Start();
  Publish({Alert("one"), Alert("two"), Alert("three")});
  const auto snapshot_seen = [](const std::string& r) {
    return r.find("event: snapshot") != std::string::npos;
  };
  const std::string resumed = ReadStream(server_->port(), {{"Last-Event-ID", "1"}}, snapshot_seen);
  const auto two = resumed.find("id: 2\nevent: event\ndata: {");
  const auto three = resumed.find("id: 3\nevent: event\ndata: {");
  const auto snap = resumed.find("id: 3\nevent: snapshot\n");
  ASSERT_NE(two, std::string::npos) << resumed;
  ASSERT_NE(three, std::string::npos) << resumed;
  ASSERT_NE(snap, std::string::npos) << resumed;
  EXPECT_LT(two, three);
  EXPECT_LT(three, snap);
  EXPECT_EQ(resumed.find("\"message\":\"one\""), std::string::npos) << "seen before the id";
  EXPECT_NE(resumed.find("\"message\":\"two\""), std::string::npos);

  // An id beyond the newest: the daemon restarted, so everything it keeps is new.
  const std::string restarted =
      ReadStream(server_->port(), {{"Last-Event-ID", "99"}}, snapshot_seen);
  EXPECT_NE(restarted.find("id: 1\nevent: event\n"), std::string::npos) << restarted;
  EXPECT_NE(restarted.find("id: 3\nevent: snapshot\n"), std::string::npos) << restarted;
}

TEST_F(Http, StreamRefusesALastEventIdThatIsNotANumber) {
  Start();
  Publish();
  auto r = client_->Get("/api/v1/stream", {{"Last-Event-ID", "abc"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("Last-Event-ID: \\\"abc\\\" is not an event id"), std::string::npos)
      << r->body;
}

TEST_F(Http, StreamsAreCappedAndTheRestKeepsAnswering) {
  Start(/*max_streams=*/1);
  Publish();
  std::atomic<bool> stop{false};
  std::promise<void> open;
  std::atomic<bool> opened{false};
  std::thread holder([&] {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(10, 0);
    c.Get("/api/v1/stream", [&](const char*, std::size_t) {
      if (!opened.exchange(true)) open.set_value();
      return !stop.load();
    });
  });
  ASSERT_EQ(open.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto second = client_->Get("/api/v1/stream");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 503);
  EXPECT_EQ(second->get_header_value("Retry-After"), "5");
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
  stop = true;
  Publish();  // wakes the held stream so it notices
  holder.join();
}

// The page served at "/" says DEMO at its first paint (data-source="demo"), before its script
// asks for anything: on a demo source from the start, else once a snapshot says demo.
constexpr std::string_view kDemoPage = "data-source=\"demo\"";
constexpr std::string_view kLivePage = "data-source=\"live\"";

TEST_F(Http, TheDashboardPageSaysDemoOnlyWhenTheSnapshotsDo) {
  Start();
  auto before = client_->Get("/");
  ASSERT_TRUE(before);
  if (before->body.find("gpuwatch-dashboard") == std::string::npos)
    GTEST_SKIP() << "built without the dashboard";
  EXPECT_EQ(before->status, 200);
  EXPECT_NE(before->body.find(kLivePage), std::string::npos);
  EXPECT_EQ(before->body.find(kDemoPage), std::string::npos);
  Publish();  // a fake GPU, not the demo fleet
  EXPECT_EQ(client_->Get("/")->body.find(kDemoPage), std::string::npos);
  auto demo = std::make_shared<Snapshot>(*FixedSnapshot());
  demo->demo = true;
  hub_->Publish(demo, {}, {}, {});
  const std::string page = client_->Get("/")->body;
  EXPECT_NE(page.find(kDemoPage), std::string::npos);
  EXPECT_EQ(page.find(kLivePage), std::string::npos);
  EXPECT_NE(page.find("<strong>DEMO</strong>"), std::string::npos);
}

TEST_F(Http, ADemoSourceSaysDemoBeforeItsFirstSample) {
  Start(/*max_streams=*/8, /*demo=*/true);
  auto page = client_->Get("/");
  ASSERT_TRUE(page);
  if (page->body.find("gpuwatch-dashboard") == std::string::npos)
    GTEST_SKIP() << "built without the dashboard";
  EXPECT_NE(page->body.find(kDemoPage), std::string::npos);
  EXPECT_EQ(client_->Get("/readyz")->status, 503);  // no sample yet
}

TEST_F(Http, OversizedRequestsAreRefused) {
  Start();
  auto huge = client_->Get("/metrics", {{"X-Big", std::string(20000, 'a')}});
  ASSERT_TRUE(huge);
  EXPECT_GE(huge->status, 400);
  auto long_uri = client_->Get("/api/v1/events?since=" + std::string(20000, '1'));
  ASSERT_TRUE(long_uri);
  EXPECT_GE(long_uri->status, 400);
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
}

TEST(Listen, ParsesAndRejects) {
  std::string host;
  int port = 0;
  ASSERT_TRUE(ParseListen("127.0.0.1:9835", host, port).ok());
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9835);
  ASSERT_TRUE(ParseListen("[::1]:80", host, port).ok());
  EXPECT_EQ(host, "::1");
  ASSERT_TRUE(ParseListen(":9000", host, port).ok());
  EXPECT_EQ(host, "0.0.0.0");
  const Status bad = ParseListen("localhost", host, port);
  EXPECT_NE(bad.message().find("expected HOST:PORT"), std::string::npos);
  EXPECT_NE(ParseListen("h:99999", host, port).message().find("\"99999\" is not a port"),
            std::string::npos);
}

TEST(Listen, ABusyPortIsAnErrorNamingIt) {
  auto hub = std::make_shared<Hub>();
  HttpOptions o;
  o.port = 0;
  auto first = HttpServer::Start(o, hub);
  ASSERT_TRUE(first);
  o.port = (*first)->port();
  auto second = HttpServer::Start(o, hub);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message().find("cannot listen on 127.0.0.1:" + std::to_string(o.port)),
            std::string::npos);
}

}  // namespace
}  // namespace gpuwatch::server
