// RemoteHost against a server that is not gpuwatch, answering as told: what
// it is (not a gpuwatch API, a slow one, a TLS mismatch) is named and the last
// snapshot kept; and the events' since/limit as the API pages them. Real
// daemons: remote_api_daemon_test.cc.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "export/api_documents.h"
#include "remote_fixture.h"

namespace gpuwatch::tui {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;
using remote_test::kDeadline;
using remote_test::RemoteDaemon;

// A server that is not gpuwatch, answering as told.
class FakeServer {
 public:
  enum class Mode { kSnapshot, kHello, kHtml, kBusy, kMissing, kHuge, kSlow };
  explicit FakeServer(json snapshot) : snapshot_(std::move(snapshot)) {
    server_.Get("/api/v1/snapshot", [this](const httplib::Request&, httplib::Response& res) {
      switch (mode.load()) {
        case Mode::kSnapshot:
          return res.set_content(snapshot_.dump(), "application/json");
        case Mode::kHello:
          return res.set_content(R"({"hello":1})", "application/json");
        case Mode::kHtml:
          return res.set_content("<html>router login</html>", "text/html");
        case Mode::kBusy:
          res.status = 503;
          return res.set_content(R"({"error":"busy\nnow"})", "application/json");
        case Mode::kMissing:
          res.status = 404;
          return res.set_content("not found", "text/plain");
        case Mode::kHuge:
          return res.set_content(std::string(17 << 20, ' '), "application/json");
        case Mode::kSlow: {
          std::unique_lock lock(mu_);
          released_.wait(lock, [&] { return release_; });
          return res.set_content("{}", "application/json");
        }
      }
    });
    server_.Get("/api/v1/events", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      queries_.push_back(req.params);
      res.set_content(EventsDocument(next_events_).dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (const auto until = std::chrono::steady_clock::now() + kDeadline;
         !server_.is_running() && std::chrono::steady_clock::now() < until;) {
      std::this_thread::sleep_for(5ms);
    }
  }
  ~FakeServer() {
    {
      std::lock_guard lock(mu_);
      release_ = true;
    }
    released_.notify_all();
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  void SetEvents(std::vector<Event> events) {
    std::lock_guard lock(mu_);
    next_events_ = std::move(events);
  }
  std::vector<httplib::Params> queries() {
    std::lock_guard lock(mu_);
    return queries_;
  }

  std::atomic<Mode> mode{Mode::kSnapshot};

 private:
  const json snapshot_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable released_;
  bool release_ = false;
  std::vector<Event> next_events_;
  std::vector<httplib::Params> queries_;
};

json SmallSnapshot() {
  Published p;
  auto s = std::make_shared<Snapshot>();
  s->time = std::chrono::system_clock::time_point(1796033018287000us);
  s->devices.resize(1);
  s->devices[0].fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  p.snapshot = s;
  return SnapshotDocument(p, {"fake", 1});
}

TEST_F(RemoteDaemon, NamesWhatAnotherServerAnswersAndKeepsTheSnapshot) {
  FakeServer fake(SmallSnapshot());
  ASSERT_GT(fake.port(), 0);
  RemoteHost host(Endpoint(fmt::format("127.0.0.1:{}", fake.port())));
  HostState state;
  std::vector<Event> events;
  ASSERT_TRUE(host.Refresh(state, events)) << state.down;
  const auto kept = state.snapshot;
  ASSERT_TRUE(kept);
  const std::pair<FakeServer::Mode, std::string> cases[] = {
      {FakeServer::Mode::kHello, "not a gpuwatch API: no \"schema\""},
      {FakeServer::Mode::kHtml, "not a gpuwatch API: /api/v1/snapshot is not JSON"},
      {FakeServer::Mode::kBusy, "HTTP 503 Service Unavailable: busy\\nnow"},
      {FakeServer::Mode::kMissing, "not a gpuwatch API: HTTP 404 for /api/v1/snapshot"},
      {FakeServer::Mode::kHuge, "the answer to /api/v1/snapshot is larger than 16 MiB"},
  };
  for (const auto& [mode, down] : cases) {
    fake.mode = mode;
    EXPECT_FALSE(host.Refresh(state, events));
    EXPECT_EQ(state.down, down);
    EXPECT_EQ(state.snapshot, kept);
  }
  // One that never answers (until the test ends).
  fake.mode = FakeServer::Mode::kSlow;
  RemoteEndpoint impatient = Endpoint(fmt::format("127.0.0.1:{}", fake.port()));
  impatient.timeout = 300ms;
  EXPECT_FALSE(RemoteHost(impatient).Refresh(state, events));
  EXPECT_EQ(state.down, "timed out after 300 ms");
  EXPECT_EQ(state.snapshot, kept);

  RemoteEndpoint tls = Endpoint(fmt::format("https://127.0.0.1:{}", fake.port()));
  tls.insecure = true;
  fake.mode = FakeServer::Mode::kSnapshot;
  EXPECT_FALSE(RemoteHost(tls).Refresh(state, events));
  EXPECT_EQ(state.down, "TLS: handshake failed (a plain HTTP port? try http://)");
}

TEST_F(RemoteDaemon, TakesTheLast50EventsThenOnlyNewerOnes) {
  FakeServer fake(SmallSnapshot());
  const auto t = std::chrono::system_clock::time_point(1796033018287000us);
  auto event = [](std::chrono::system_clock::time_point at, std::string message) {
    Event e;
    e.time = at;
    e.kind = Event::Kind::kProcessStarted;
    e.message = std::move(message);
    return e;
  };
  RemoteHost host(Endpoint(fmt::format("127.0.0.1:{}", fake.port())));
  HostState state;
  std::vector<Event> events;
  fake.SetEvents({event(t, "a"), event(t + 1s, "b")});
  ASSERT_TRUE(host.Refresh(state, events)) << state.down;
  fake.SetEvents({event(t + 1s, "b"), event(t + 2s, "c")});  // the API's since is >=
  ASSERT_TRUE(host.Refresh(state, events)) << state.down;
  fake.SetEvents({event(t + 2s, "c"), event(t + 2s, "d")});  // another at the same time
  ASSERT_TRUE(host.Refresh(state, events)) << state.down;
  std::vector<std::string> messages;
  for (const Event& e : events) messages.push_back(e.message);
  EXPECT_EQ(messages, (std::vector<std::string>{"a", "b", "c", "d"}));

  const auto queries = fake.queries();
  ASSERT_EQ(queries.size(), 3u);
  EXPECT_EQ(queries[0].count("since"), 0u);
  ASSERT_EQ(queries[0].count("limit"), 1u);
  EXPECT_EQ(queries[0].find("limit")->second, "50");
  for (std::size_t i = 1; i < 3; ++i) {
    ASSERT_EQ(queries[i].count("since"), 1u);
    const double since = std::stod(queries[i].find("since")->second);
    const double newest = UnixSeconds(t + std::chrono::seconds(i));
    EXPECT_LE(since, newest);
    EXPECT_GT(since, newest - 0.01);
  }
}

}  // namespace
}  // namespace gpuwatch::tui
