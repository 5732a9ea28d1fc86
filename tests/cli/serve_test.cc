// `gpuwatch serve` as a process: it serves before the driver answers (and
// says why), reloads rules on SIGHUP (keeping the running ones when the new
// file is bad), stops cleanly on SIGTERM, and refuses bad options before
// listening; shows the machine's leases (its own GPUWATCH_RUNTIME_DIR). The port is picked by the
// kernel (--listen 127.0.0.1:0) and read from the daemon's log.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "host/leases.h"
#include "process_fixture.h"

namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

using Serve = gpuwatch_test::ProcessTest;
using gpuwatch_test::Slurp;

TEST_F(Serve, WithoutADriverItServesAndSaysWhy) {
  Start({"serve", "--listen", "127.0.0.1:0"},
        {"GPUWATCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"});
  const int port = Port();
  ASSERT_GT(port, 0) << Slurp(dir_ / "log");
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  ASSERT_TRUE(WaitForLog("cannot read the GPUs yet (retrying)")) << Slurp(dir_ / "log");
  auto ready = c.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_NE(ready->body.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << ready->body;
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("gpuwatch_exporter_scrapes_total"), std::string::npos);
  EXPECT_EQ(metrics->body.find("gpuwatch_memory_used_bytes"), std::string::npos);
  kill(pid_, SIGTERM);
  EXPECT_EQ(Exit(), 0) << Slurp(dir_ / "log");
}

// Each thread is named (core/thread_name.h), and an idle daemon runs seven
// whatever its GPUs: main, the sampler, its watchdog, one reader for every
// GPU (sampler/device_readers.h), the HTTP listener, the shedder and the
// answer socket (docs/architecture.md, "Threads"). No HTTP request is made,
// so no worker is started; the exit guard is an alarm, not a thread.
TEST_F(Serve, AnIdleDaemonRunsSevenNamedThreadsOnOneGpuAndOnEight) {
  for (const char* scenario :
       {"/tests/integration/scenarios/host-b.yaml", "/scenarios/demo.yaml"}) {
    SCOPED_TRACE(scenario);
    fs::remove(dir_ / "log");  // the first daemon's, which would answer the waits below
    Start(
        {"serve", "--listen", "127.0.0.1:0", "-i", "200ms"},
        {std::string("GPUWATCH_NVML_LIBRARY=") + GPUWATCH_BINARY_DIR + "/lib/libnvidia-ml-fake.so",
         std::string("GPUWATCH_FAKE_SCENARIO=") + GPUWATCH_SOURCE_DIR + scenario});
    ASSERT_GT(Port(), 0) << Slurp(dir_ / "log");
    ASSERT_TRUE(WaitForLog("answer from this daemon's samples")) << Slurp(dir_ / "log");
    const std::multiset<std::string> expected = {"gpuwatch-full", "gw-sampler", "gw-watchdog",
                                                 "gw-reader0",    "gw-http",    "gw-shedder",
                                                 "gw-answers"};
    // The answer socket is offered before the GPUs are opened (on gw-open, a
    // thread that ends once they are) and before the sampler starts: wait for
    // the daemon to settle (10 s at most), then compare.
    std::multiset<std::string> names;
    for (int i = 0; i < 200; ++i) {
      names.clear();
      for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid_) + "/task")) {
        std::string name = Slurp(task.path() / "comm");
        if (!name.empty() && name.back() == '\n') name.pop_back();
        names.insert(name);
      }
      if (names == expected) break;
      std::this_thread::sleep_for(50ms);
    }
    std::string seen;
    for (const auto& n : names) seen += n + " ";
    EXPECT_EQ(names, expected) << seen;
    kill(pid_, SIGTERM);
    EXPECT_EQ(Exit(), 0) << Slurp(dir_ / "log");
  }
}

TEST_F(Serve, SighupReloadsRulesAndKeepsThemWhenTheNewFileIsBad) {
  const fs::path rules = dir_ / "rules.yaml";
  std::ofstream(rules) << "rules:\n  - name: hot\n    condition: temperature_gpu_celsius > 10\n"
                          "    severity: warning\n    message: \"GPU {gpu} hot\"\n";
  Start({"serve", "--scenario", "scenarios/test/fixed.yaml", "--listen", "127.0.0.1:0", "-i",
         "200ms", "--rules", rules.string()});
  const int port = Port();
  ASSERT_GT(port, 0) << Slurp(dir_ / "log");
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  bool ready = false;
  for (int i = 0; i < 100 && !ready; ++i) {
    auto r = c.Get("/readyz");
    ready = r && r->status == 200;
    if (!ready) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(ready) << Slurp(dir_ / "log");
  ASSERT_TRUE(WaitForLog("GPU 0 hot")) << Slurp(dir_ / "log");

  std::ofstream(rules) << "rules:\n  - name: [broken\n";
  kill(pid_, SIGHUP);
  EXPECT_TRUE(WaitForLog("SIGHUP: keeping the running configuration")) << Slurp(dir_ / "log");
  EXPECT_NE(Slurp(dir_ / "log").find("rules.yaml:"), std::string::npos)
      << "the error names the file";
  EXPECT_EQ(c.Get("/healthz")->status, 200) << "still serving";

  std::ofstream(rules) << "rules: []\n";
  kill(pid_, SIGHUP);
  EXPECT_TRUE(WaitForLog("SIGHUP: configuration and rules reloaded")) << Slurp(dir_ / "log");
  kill(pid_, SIGTERM);
  EXPECT_EQ(Exit(), 0);
  EXPECT_NE(Slurp(dir_ / "log").find("gpuwatch serve: stopping"), std::string::npos);
}

// This test process stands for a training job: the scenario lists it on GPU
// 0 (pid_file), and it reports over --socket as the Python adapters do.
TEST_F(Serve, JobsReportFrameworkMemoryAndMarksOverTheSocket) {
  std::ofstream(dir_ / "pid") << getpid();
  std::ofstream(dir_ / "job.yaml")
      << "clock: init\ndevices:\n  - name: NVIDIA H200\n"
      << "    processes:\n      - {pid_file: " << (dir_ / "pid").string()
      << ", memory: 3GiB}\n  - name: NVIDIA H200\n";
  const std::string sock = (dir_ / "gpuwatch.sock").string();
  Start({"--scenario", (dir_ / "job.yaml").string(), "serve", "--listen", "127.0.0.1:0", "-i",
         "100ms", "--socket", sock, "--process-metrics"});
  const int port = Port();
  ASSERT_GT(port, 0) << Slurp(dir_ / "log");
  EXPECT_TRUE(WaitForLog("jobs report framework memory and marks on " + sock));

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string lines =
      "hello framework=torch version=2.11.0\n"
      "mem framework=torch device=0 allocated=1073741824 reserved=2147483648\n"
      "mark step=10\n";
  ASSERT_EQ(write(fd, lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));

  httplib::Client c("127.0.0.1", port);
  nlohmann::json framework;
  for (int i = 0; i < 100 && framework.empty(); ++i) {
    auto r = c.Get("/api/v1/snapshot");
    if (r && r->status == 200)
      framework = nlohmann::json::parse(r->body)["devices"][0]["framework"];
    if (framework.empty()) std::this_thread::sleep_for(50ms);
  }
  close(fd);
  ASSERT_EQ(framework.size(), 1u) << Slurp(dir_ / "log");
  EXPECT_EQ(framework[0]["pid"], getpid());
  EXPECT_EQ(framework[0]["framework"], "torch");
  EXPECT_EQ(framework[0]["bytes"]["reserved"], 2147483648.0);
  auto events = nlohmann::json::parse(c.Get("/api/v1/events")->body);
  bool mark = false;
  for (const auto& e : events["events"])
    mark = mark || (e["kind"] == "mark" && e["message"].dump().find("step") != std::string::npos);
  EXPECT_TRUE(mark) << events.dump();
  const std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("gpuwatch_framework_memory_bytes{gpu=\"0\",hostname="), std::string::npos);
  EXPECT_NE(metrics.find("framework=\"torch\",kind=\"allocated\"} 1073741824"), std::string::npos)
      << metrics.substr(0, 400);
}

const std::string kDemoGpu2 = "GPU-4e8a1f60-93bd-4c2e-8f75-b1d0a6e3c952";
const std::string kDemoMig = "MIG-5b1e0c7a-3d92-5f46-8a1b-c4e7f2093d6a";  // GPU 5, gi 1

gpuwatch::host::Lease LeaseFor(const gpuwatch::ProcessKey& holder, std::string uuid,
                               std::string device, std::uint64_t ticket) {
  gpuwatch::host::Lease l;
  l.uuid = std::move(uuid);
  l.device = std::move(device);
  l.holders = {holder};
  l.user = "alice";
  l.command = "python train.py --rank 0";
  l.ticket = ticket;
  l.since = std::chrono::system_clock::now() - 130s;
  return l;
}

// The value of the sample of `family` whose labels match `labels` (a regex).
std::string Sample(const std::string& text, const std::string& family, const std::string& labels) {
  std::smatch m;
  const std::regex line("\n" + family + "\\{" + labels + "[^}]*\\} (\\S+)\n");
  return std::regex_search(text, m, line) ? m[1].str() : "absent";
}

TEST_F(Serve, LeasesShowInTheApiAndMetricsAndGoWithTheirHolder) {
  const fs::path run = dir_ / "run";
  const gpuwatch::host::LeaseBook book(run, gpuwatch::host::ProcessLiveness("/proc"));
  const gpuwatch::host::ProcessLiveness proc("/proc");
  auto me = proc.Identify(static_cast<std::uint32_t>(getpid()));
  ASSERT_TRUE(me) << me.error().message();
  pid_t holder = fork();  // holds the MIG lease until the test kills it
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    pause();
    _exit(0);
  }
  auto other = proc.Identify(static_cast<std::uint32_t>(holder));
  ASSERT_TRUE(other) << other.error().message();
  ASSERT_TRUE(book.Update([&](gpuwatch::host::LeaseTable& t) {
                    t.leases.push_back(LeaseFor(*me, kDemoGpu2, "2", t.next_ticket++));
                    t.leases.push_back(LeaseFor(*other, kDemoMig, "5:1", t.next_ticket++));
                    gpuwatch::host::Waiter w;
                    w.ticket = t.next_ticket++;
                    w.holder = *me;
                    w.user = "bob";
                    w.command = "python eval.py";
                    w.wants = "1 GPU with ≥ 40.0 GiB free";
                    w.since = std::chrono::system_clock::now() - 65s;
                    t.queue.push_back(w);
                  })
                  .ok());

  const std::string runtime = "GPUWATCH_RUNTIME_DIR=" + run.string();
  Start({"--demo", "serve", "--listen", "127.0.0.1:0", "-i", "200ms", "--process-metrics",
         "--process-user"},
        {runtime});
  const int port = Port();
  ASSERT_GT(port, 0) << Slurp(dir_ / "log");
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);

  for (int i = 0; i < 200; ++i) {  // the first snapshot
    auto r = c.Get("/readyz");
    if (r && r->status == 200) break;
    std::this_thread::sleep_for(50ms);
  }
  auto leases = c.Get("/api/v1/leases");
  ASSERT_TRUE(leases);
  ASSERT_EQ(leases->status, 200) << leases->body;
  const json doc = json::parse(leases->body);
  ASSERT_EQ(doc["leases"].size(), 2u) << leases->body;
  EXPECT_EQ(doc["leases"][0]["pid"], getpid());
  EXPECT_EQ(doc["leases"][0]["device"], "2");
  EXPECT_EQ(doc["leases"][0]["command"], "python train.py --rank 0");
  EXPECT_EQ(doc["leases"][1]["pid"], holder);
  ASSERT_EQ(doc["queue"].size(), 1u);
  EXPECT_EQ(doc["queue"][0]["user"], "bob");
  EXPECT_EQ(doc["queue"][0]["position"], 1);

  const json snap = json::parse(c.Get("/api/v1/snapshot")->body);
  EXPECT_EQ(snap["devices"][2]["lease"]["uuid"], kDemoGpu2);
  EXPECT_TRUE(snap["devices"][0]["lease"].is_null());
  json mig_lease;
  for (const auto& m : snap["devices"][5]["mig_devices"]) {
    if (m["fields"]["uuid"] == kDemoMig) mig_lease = m["lease"];
  }
  EXPECT_EQ(mig_lease["device"], "5:1") << snap["devices"][5].dump().substr(0, 400);
  EXPECT_EQ(json::parse(c.Get("/api/v1/devices")->body)["devices"][2]["lease"]["pid"], getpid());

  const std::string metrics = c.Get("/metrics")->body;
  EXPECT_EQ(Sample(metrics, "gpuwatch_gpu_leased", "gpu=\"2\",uuid=\"" + kDemoGpu2 + "\""), "1")
      << metrics.substr(0, 600);
  EXPECT_EQ(Sample(metrics, "gpuwatch_gpu_leased", "gpu=\"0\","), "0");
  EXPECT_EQ(Sample(metrics, "gpuwatch_mig_leased", "gpu=\"5\",uuid=\"" + kDemoMig + "\""), "1");
  EXPECT_EQ(Sample(metrics, "gpuwatch_lease_queue_length", ""), "1");
  const double waited = std::stod(Sample(metrics, "gpuwatch_lease_queue_wait_seconds", ""));
  EXPECT_GE(waited, 65);
  EXPECT_LT(waited, 120);
  EXPECT_EQ(Sample(metrics, "gpuwatch_lease_info",
                   "gpu=\"2\",uuid=\"" + kDemoGpu2 + "\",hostname=\"[^\"]*\",device=\"2\",pid=\"" +
                       std::to_string(getpid()) +
                       "\",command=\"python train.py --rank 0\",ticket=\"1\",user=\"alice\""),
            "1")
      << metrics.substr(metrics.find("gpuwatch_lease_info"), 800);
  if (std::system("command -v promtool >/dev/null 2>&1") == 0) {
    std::ofstream(dir_ / "metrics.prom") << metrics;
    const std::string check = "promtool check metrics < " + (dir_ / "metrics.prom").string() +
                              " > " + (dir_ / "promtool.out").string() + " 2>&1";
    EXPECT_EQ(std::system(check.c_str()), 0) << Slurp(dir_ / "promtool.out");
    EXPECT_EQ(Slurp(dir_ / "promtool.out"), "");
  }

  // The MIG device's holder dies (kill -9: nobody gives the lease back).
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  const json after = json::parse(c.Get("/api/v1/leases")->body);
  ASSERT_EQ(after["leases"].size(), 1u) << after.dump();
  EXPECT_EQ(after["leases"][0]["uuid"], kDemoGpu2);
  EXPECT_EQ(
      Sample(c.Get("/metrics")->body, "gpuwatch_mig_leased", "gpu=\"5\",uuid=\"" + kDemoMig + "\""),
      "0");
}

TEST_F(Serve, BadOptionsFailBeforeListening) {
  std::ofstream(dir_ / "serve.yaml") << "listen: 127.0.0.1:0\nintervall: 1s\n";
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"serve", "--config", (dir_ / "serve.yaml").string()},
       "serve.yaml:2:1: unknown option \"intervall\""},
      {{"serve", "--listen", "nowhere"}, "--listen \"nowhere\": expected HOST:PORT"},
      {{"serve", "--listen", "127.0.0.1:0", "-i", "10ms"},
       "the daemon's shortest interval is 100ms"},
      {{"serve", "--listen", "127.0.0.1:0", "--web-config", "/nonexistent.yml"},
       "cannot read /nonexistent.yml"},
      {{"serve", "--listen", "127.0.0.1:0", "--socket", (dir_ / "serve.yaml").string()},
       "a file that is not a socket is in the way"},
      {{"serve", "--config", dir_.string()},
       "--config: " + dir_.string() + " is a directory, not a regular file"},
      {{"serve", "--config", "/dev/zero"},  // read to the end, it never ends
       "--config: /dev/zero is a character device, not a regular file"},
  };
  for (const auto& [args, why] : cases) {
    Start(args);
    EXPECT_EQ(Exit(), 2) << why;
    const std::string log = Slurp(dir_ / "log");
    EXPECT_NE(log.find(why), std::string::npos) << log;
    EXPECT_EQ(log.find("listening"), std::string::npos) << log;
  }
}

}  // namespace
