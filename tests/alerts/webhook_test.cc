// The webhook action against a real cpp-httplib server on 127.0.0.1.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "../analysis/rules/test_snapshots.h"
#include "alerts/action_runner.h"
#include "analysis/rules/rule_parser.h"
#include "runner_util.h"

namespace gpuwatch::alerts {
namespace {

using rules::ParseOptions;
using rules::ParseRules;

using testing::Lines;
using testing::Options;

// Accepts POST /hook; answers 500 to the first `failures` requests.
class HookServer {
 public:
  explicit HookServer(int failures, std::chrono::milliseconds delay = {})
      : failures_(failures), delay_(delay) {
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      int n = ++requests_;
      {
        std::lock_guard lock(mu_);
        bodies_.push_back(req.body);
        content_types_.push_back(req.get_header_value("Content-Type"));
      }
      if (delay_.count() > 0) {
        std::unique_lock lock(mu_);
        done_.wait_for(lock, delay_, [this] { return stopping_; });
      }
      res.status = n <= failures_ ? 500 : 204;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~HookServer() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    done_.notify_all();
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  int requests() const { return requests_; }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  std::vector<std::string> content_types() {
    std::lock_guard lock(mu_);
    return content_types_;
  }

 private:
  httplib::Server server_;
  int failures_;
  std::chrono::milliseconds delay_;
  std::atomic<int> requests_{0};
  std::mutex mu_;
  std::condition_variable done_;
  bool stopping_ = false;  // guarded by mu_
  std::vector<std::string> bodies_;
  std::vector<std::string> content_types_;
  int port_ = 0;
  std::thread thread_;
};

RuleSet HookRules(const std::string& url, const std::string& extra) {
  Result<RuleSet> set = ParseRules(
      "rules:\n  - name: mem\n    condition: memory_used_ratio > 90%\n    actions:\n"
      "      - webhook: {url: \"" +
          url + "\"" + extra + "}\n",
      "t.yaml");
  EXPECT_TRUE(set) << set.error().message();
  return set ? std::move(*set) : RuleSet{};
}

Event CriticalFiring() {
  Event e;
  e.time = rules::testing::At(0);
  e.kind = Event::Kind::kAlertFiring;
  e.severity = Severity::kCritical;
  e.source = "mem";
  e.gpu = 1;
  e.value = 0.97;
  e.message = "GPU 1: memory 97.0%";
  return e;
}

TEST(Webhook, PostsTheEventJson) {
  HookServer server(0);
  auto runner =
      ActionRunner::Create(HookRules(server.url(), ""), Options({}, false, 1024, "node7"));
  ASSERT_TRUE(runner) << runner.error().message();
  (*runner)->Submit(CriticalFiring());
  (*runner)->Stop();
  ASSERT_EQ(server.requests(), 1);
  EXPECT_EQ(server.content_types()[0], "application/json");
  nlohmann::json body = nlohmann::json::parse(server.bodies()[0]);
  EXPECT_EQ(body["version"], 1);
  EXPECT_EQ(body["kind"], "alert_firing");
  EXPECT_EQ(body["rule"], "mem");
  EXPECT_EQ(body["severity"], "critical");
  EXPECT_EQ(body["host"], "node7");
  EXPECT_EQ(body["gpu"], 1);
  EXPECT_EQ(body["value"], 0.97);
  EXPECT_EQ(body["message"], "GPU 1: memory 97.0%");
  EXPECT_EQ((*runner)->stats().delivered, 1u);
}

TEST(Webhook, RetriesAfterFailuresUntilTheServerAccepts) {
  HookServer server(2);
  Lines log;
  auto runner = ActionRunner::Create(HookRules(server.url(), ", retries: 3, backoff: 1ms"),
                                     Options(log.Sink()));
  ASSERT_TRUE(runner);
  (*runner)->Submit(CriticalFiring());
  // Stop() would cut backoff short: wait for delivery through the stats.
  while ((*runner)->stats().delivered + (*runner)->stats().failed == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  (*runner)->Stop();
  EXPECT_EQ(server.requests(), 3);
  EXPECT_EQ((*runner)->stats().delivered, 1u);
  EXPECT_TRUE(log.lines.empty());
  std::vector<std::string> bodies = server.bodies();
  EXPECT_EQ(bodies[0], bodies[2]) << "every attempt sends the same body";
}

TEST(Webhook, GivesUpAfterRetriesWithOneWarning) {
  HookServer server(100);
  Lines log;
  auto runner = ActionRunner::Create(HookRules(server.url(), ", retries: 2, backoff: 1ms"),
                                     Options(log.Sink()));
  ASSERT_TRUE(runner);
  (*runner)->Submit(CriticalFiring());
  while ((*runner)->stats().failed == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  (*runner)->Stop();
  EXPECT_EQ(server.requests(), 3);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_NE(log.lines[0].find("gave up after 3 attempt(s): HTTP 500"), std::string::npos)
      << log.lines[0];
  EXPECT_NE(log.lines[0].find(server.url()), std::string::npos) << log.lines[0];
}

TEST(Webhook, SlowServerTimesOutAndCountsAsAFailedAttempt) {
  HookServer server(0, std::chrono::seconds(30));
  Lines log;
  auto runner = ActionRunner::Create(
      HookRules(server.url(), ", timeout: 100ms, retries: 1, backoff: 1ms"), Options(log.Sink()));
  ASSERT_TRUE(runner);
  (*runner)->Submit(CriticalFiring());
  while ((*runner)->stats().failed == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  (*runner)->Stop();
  EXPECT_EQ(server.requests(), 2);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_NE(log.lines[0].find("gave up after 2 attempt(s)"), std::string::npos) << log.lines[0];
  EXPECT_EQ(log.lines[0].find("HTTP"), std::string::npos) << "no response came back";
}

TEST(Webhook, SubmitDoesNotWaitForASlowServer) {
  HookServer server(0, std::chrono::seconds(30));
  auto runner = ActionRunner::Create(HookRules(server.url(), ", timeout: 100ms, retries: 0"),
                                     Options([](std::string_view) {}));
  ASSERT_TRUE(runner);
  for (int i = 0; i < 10; ++i) (*runner)->Submit(CriticalFiring());
  // All ten were accepted while the worker waits on the first request.
  EXPECT_EQ((*runner)->stats().submitted, 10u);
  EXPECT_EQ((*runner)->stats().delivered, 0u);
}

}  // namespace
}  // namespace gpuwatch::alerts
