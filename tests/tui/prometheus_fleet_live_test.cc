// FetchFleet against a real Prometheus (Debian's `prometheus`) that scrapes
// two real `gpuwatch serve` daemons every second: fleet-a on the demo fleet
// (8 GPUs, memory moving every sample, --process-metrics) and fleet-b on
// tests/integration/scenarios/host-c.yaml (4 idle GPUs, constants). Their
// values must be those of each daemon's /api/v1/snapshot; then fleet-b is
// killed and must show down, with its last values, while fleet-a goes on.
//
// Ports: the daemons listen on ports the kernel picks (read from their logs);
// Prometheus on 127.0.0.1:19092 (tests/integration uses 19090 and 19091).
// Every process is started with PR_SET_PDEATHSIG and stopped by its owner's
// destructor, so none outlives the test, even one that fails or crashes.
#ifdef GPUWATCH_PROMETHEUS
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tui/prometheus_fleet.h"

extern char** environ;

namespace gpuwatch::tui {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using Steady = std::chrono::steady_clock;

constexpr int kPrometheusPort = 19092;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A child process, its stdout and stderr in `log`; SIGTERM then SIGKILL on
// destruction.
class Child {
 public:
  Child(std::vector<std::string> argv, const fs::path& log, const fs::path& home) : log_(log) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view v(*e);
      if (v.starts_with("HOME=") || v.starts_with("GPUWATCH_")) continue;  // nothing steers it
      env.emplace_back(v);
    }
    env.push_back("HOME=" + home.string());
    env.push_back("GPUWATCH_RUNTIME_DIR=" + (home / "run").string());
    std::vector<char*> args, envp;
    for (auto& a : argv) args.push_back(a.data());
    for (auto& e : env) envp.push_back(e.data());
    args.push_back(nullptr);
    envp.push_back(nullptr);
    const std::string log_path = log.string();
    pid_ = fork();
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      execve(args[0], args.data(), envp.data());
      _exit(127);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() { Stop(SIGTERM); }

  // Signals it and waits (5 s at most for SIGTERM, then SIGKILL).
  void Stop(int signal) {
    if (pid_ <= 0) return;
    kill(pid_, signal);
    for (auto until = Steady::now() + 5s; Steady::now() < until;) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(20ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string Log() const { return Slurp(log_); }
  bool started() const { return pid_ > 0; }

 private:
  fs::path log_;
  pid_t pid_ = -1;
};

// A `gpuwatch serve` on a port the kernel picks.
struct Daemon {
  Daemon(const std::string& hostname, std::vector<std::string> source, const fs::path& dir)
      : child(
            [&] {
              std::vector<std::string> a = {std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch",
                                            "serve",
                                            "--listen",
                                            "127.0.0.1:0",
                                            "--hostname",
                                            hostname,
                                            "--interval",
                                            "1s",
                                            "--process-metrics"};
              a.insert(a.end(), source.begin(), source.end());
              return a;
            }(),
            dir / (hostname + ".log"), dir) {}
  // The port from the log (0 if it never says), within `deadline`.
  int WaitForPort(Steady::time_point deadline) {
    const std::regex listening("listening on http://127\\.0\\.0\\.1:(\\d+)/");
    while (Steady::now() < deadline) {
      std::smatch m;
      const std::string log = child.Log();
      if (std::regex_search(log, m, listening)) return port = std::stoi(m[1]);
      std::this_thread::sleep_for(50ms);
    }
    return 0;
  }
  json Snapshot() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    auto r = c.Get("/api/v1/snapshot");
    if (!r || r->status != 200) return json();
    return json::parse(r->body, nullptr, false);
  }
  Child child;
  int port = 0;
};

const HostState* Host(const std::vector<HostState>& fleet, const std::string& name) {
  for (const HostState& h : fleet) {
    if (h.hostname == name) return &h;
  }
  return nullptr;
}

bool PortAnswers(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1, 0);
  return static_cast<bool>(c.Get("/"));
}

TEST(FetchFleet, ReadsEveryHostARealPrometheusScrapesAndSeesOneGoDown) {
  const auto started = Steady::now();
  const fs::path dir =
      fs::temp_directory_path() / ("gw-prometheus-fleet-" + std::to_string(getpid()));
  fs::create_directories(dir / "run");
  struct RemoveDir {
    fs::path p;
    ~RemoveDir() { fs::remove_all(p); }
  } remove_dir{dir};
  ASSERT_FALSE(PortAnswers(kPrometheusPort))
      << "127.0.0.1:" << kPrometheusPort << " is taken: this test's Prometheus needs it";

  Daemon a("fleet-a", {"--demo"}, dir);
  Daemon b(
      "fleet-b",
      {"--scenario", std::string(GPUWATCH_SOURCE_DIR) + "/tests/integration/scenarios/host-c.yaml"},
      dir);
  ASSERT_GT(a.WaitForPort(Steady::now() + 30s), 0) << a.child.Log();
  ASSERT_GT(b.WaitForPort(Steady::now() + 30s), 0) << b.child.Log();
  const std::string target_b = "127.0.0.1:" + std::to_string(b.port);
  std::ofstream(dir / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "scrape_configs:\n  - job_name: gpuwatch\n    static_configs:\n"
      << "      - targets: [\"127.0.0.1:" << a.port << "\", \"" << target_b << "\"]\n";
  Child prometheus(
      {GPUWATCH_PROMETHEUS, "--config.file=" + (dir / "prometheus.yml").string(),
       "--storage.tsdb.path=" + (dir / "data").string(),
       "--web.listen-address=127.0.0.1:" + std::to_string(kPrometheusPort), "--log.level=warn"},
      dir / "prometheus.log", dir);
  auto source = ParsePrometheusUrl("http://127.0.0.1:" + std::to_string(kPrometheusPort));
  ASSERT_TRUE(source);
  source->timeout = 10s;  // two loaded cores

  // Until both hosts are up, with every GPU; meanwhile what the daemons serve,
  // per GPU: the values seen and the largest change from one sample to the next.
  std::map<std::string, std::map<int, std::set<double>>> used_seen;
  std::map<std::string, std::map<int, double>> step;
  std::map<std::string, std::map<int, double>> last_used;
  std::map<std::string, json> latest;
  const auto observe = [&](const std::string& name, const Daemon& d) {
    json s = d.Snapshot();
    if (!s.is_object()) return;
    for (const json& dev : s["devices"]) {
      const int i = dev["index"];
      const double used = dev["fields"].value("memory_used_bytes", -1.0);
      if (last_used[name].contains(i)) {
        step[name][i] = std::max(step[name][i], std::abs(used - last_used[name][i]));
      }
      last_used[name][i] = used;
      used_seen[name][i].insert(used);
    }
    latest[name] = std::move(s);
  };
  std::vector<HostState> fleet;
  std::string last_error;
  for (const auto deadline = Steady::now() + 90s; Steady::now() < deadline;) {
    observe("fleet-a", a);
    observe("fleet-b", b);
    auto f = FetchFleet(*source);
    if (f) {
      const HostState* ha = Host(*f, "fleet-a");
      const HostState* hb = Host(*f, "fleet-b");
      if (f->size() == 2 && ha && hb && ha->down.empty() && hb->down.empty() && ha->snapshot &&
          hb->snapshot && ha->snapshot->devices.size() == 8 && hb->snapshot->devices.size() == 4) {
        fleet = std::move(*f);
        break;
      }
      last_error = fmt::format("{} host(s)", f->size());
    } else {
      last_error = f.error().message();
    }
    std::this_thread::sleep_for(250ms);
  }
  ASSERT_EQ(fleet.size(), 2u) << "never two hosts up with 8 and 4 GPUs; last: " << last_error
                              << "\n"
                              << prometheus.Log();
  observe("fleet-a", a);
  observe("fleet-b", b);

  for (const std::string name : {"fleet-a", "fleet-b"}) {
    SCOPED_TRACE(name);
    const Snapshot& s = *Host(fleet, name)->snapshot;
    EXPECT_EQ(Host(fleet, name)->label, name);
    EXPECT_THAT(s.source, ::testing::StartsWith("prometheus:127.0.0.1:"));
    const json& daemon = latest[name];
    ASSERT_EQ(s.devices.size(), daemon["devices"].size());
    EXPECT_LT(std::abs(std::chrono::duration<double>(s.time.time_since_epoch()).count() -
                       daemon["time"].get<double>()),
              30);
    for (std::size_t i = 0; i < s.devices.size(); ++i) {
      const DeviceSample& d = s.devices[i];
      const json& want = daemon["devices"][i];
      SCOPED_TRACE(fmt::format("GPU {}", i));
      EXPECT_EQ(d.index, want["index"].get<int>());
      EXPECT_EQ(d.health, DeviceHealth::kOk);
      EXPECT_EQ(d.fields[FieldId::kName].text(), want["name"].get<std::string>());
      EXPECT_EQ(d.fields[FieldId::kUuid].text(), want["uuid"].get<std::string>());
      EXPECT_EQ(d.fields[FieldId::kMemoryTotalBytes].number(),
                want["fields"]["memory_total_bytes"].get<double>());
      ASSERT_TRUE(d.fields[FieldId::kMemoryUsedBytes].is_number());
      const double used = d.fields[FieldId::kMemoryUsedBytes].number();
      // A value the daemon served, or one within a few of its steps of the latest.
      const double tolerance = 5 * step[name][d.index];
      EXPECT_TRUE(used_seen[name][d.index].contains(used) ||
                  std::abs(used - last_used[name][d.index]) <= tolerance)
          << "Prometheus " << used << ", daemon " << last_used[name][d.index] << " ± " << tolerance;
      if (tolerance == 0) {
        EXPECT_EQ(used, last_used[name][d.index]);  // constants: exact
      }
      EXPECT_EQ(d.processes.size(), want["processes"].size());
    }
  }

  // fleet-b goes: Prometheus's up turns 0 and the host shows down, with what
  // it last had, while fleet-a goes on.
  b.child.Stop(SIGKILL);
  const HostState* down = nullptr;
  for (const auto deadline = Steady::now() + 60s; Steady::now() < deadline;) {
    auto f = FetchFleet(*source);
    if (f) {
      fleet = std::move(*f);
      down = Host(fleet, "fleet-b");
      const HostState* up = Host(fleet, "fleet-a");
      if (down && !down->down.empty() && up && up->down.empty()) break;
      last_error = down ? "fleet-b: \"" + down->down + "\"" : "fleet-b missing";
    } else {
      last_error = f.error().message();
    }
    down = nullptr;
    std::this_thread::sleep_for(250ms);
  }
  ASSERT_NE(down, nullptr) << "fleet-b never down; last: " << last_error;
  EXPECT_EQ(down->down, "Prometheus: target " + target_b + " down");
  ASSERT_TRUE(down->snapshot);
  ASSERT_EQ(down->snapshot->devices.size(), 4u);
  for (const DeviceSample& d : down->snapshot->devices) {
    EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].number(), last_used["fleet-b"][d.index]);
  }
  const HostState* up = Host(fleet, "fleet-a");
  ASSERT_TRUE(up && up->snapshot);
  EXPECT_EQ(up->snapshot->devices.size(), 8u);
  EXPECT_TRUE(up->snapshot->devices[0].fields[FieldId::kMemoryUsedBytes].is_number());
  std::cout << "[ info ] took " << std::chrono::duration<double>(Steady::now() - started).count()
            << " s\n";
}

}  // namespace
}  // namespace gpuwatch::tui
#endif  // GPUWATCH_PROMETHEUS
