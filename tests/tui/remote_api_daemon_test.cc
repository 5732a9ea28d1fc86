// RemoteHost against real `gpuwatch serve --demo` daemons: the demo fleet,
// its events once each, a daemon killed (connection refused, the snapshot
// kept) and started again, one without a driver yet, basic auth and TLS
// through --web-config; and against a server that is not gpuwatch (what it
// is named), a slow one, and the events' since/limit. Ports are picked by
// the kernel (--listen 127.0.0.1:0, read from the log); readiness is polled
// with a deadline, never slept for. A server that is not gpuwatch:
// remote_api_server_test.cc.
#include <crypt.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "export/api_documents.h"
#include "remote_fixture.h"
#include "tui/remote_api.h"

namespace gpuwatch::tui {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;

using remote_test::kDeadline;
using remote_test::RemoteDaemon;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Bcrypt(const std::string& password) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn("$2b$", 4, nullptr, 0, salt, sizeof salt), nullptr);
  crypt_data data{};
  return crypt_r(password.c_str(), salt, &data);
}

// A `gpuwatch serve` process: started, its port read from its log, killed.
class Daemon {
 public:
  Daemon(fs::path dir, std::vector<std::string> args, std::vector<std::string> env = {})
      : dir_(std::move(dir)), args_(std::move(args)), env_(std::move(env)) {}
  ~Daemon() { Kill(); }

  // Starts it on `port` (0: the kernel picks) and returns the port it
  // listens on, 0 when it never said.
  int Start(int port = 0) {
    log_ = dir_ / fmt::format("daemon{}.log", starts_++);
    std::vector<std::string> all = {std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch", "serve",
                                    "--listen", fmt::format("127.0.0.1:{}", port)};
    all.insert(all.end(), args_.begin(), args_.end());
    std::vector<std::string> env = env_;
    env.push_back("GPUWATCH_RUNTIME_DIR=" + (dir_ / "run").string());
    pid_ = fork();
    if (pid_ == 0) {
      const int log = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(log, STDERR_FILENO);
      dup2(log, STDOUT_FILENO);
      if (chdir(GPUWATCH_SOURCE_DIR) != 0) _exit(126);
      unsetenv("GPUWATCH_FAKE_TIME");
      for (auto& e : env) putenv(e.data());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    const std::regex listening("listening on (https?)://127\\.0\\.0\\.1:(\\d+)/");
    for (const auto until = std::chrono::steady_clock::now() + kDeadline;
         std::chrono::steady_clock::now() < until;) {
      std::smatch m;
      const std::string text = Slurp(log_);
      if (std::regex_search(text, m, listening)) {
        tls_ = m[1] == "https";
        return port_ = std::stoi(m[2]);
      }
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return 0;
      }
      std::this_thread::sleep_for(20ms);
    }
    return 0;
  }
  // Whether /readyz answers 200 (a fresh snapshot) before the deadline.
  bool WaitReady() {
    std::unique_ptr<httplib::ClientImpl> c;
    if (tls_) {
      auto tls = std::make_unique<httplib::SSLClient>("127.0.0.1", port_);
      tls->enable_server_certificate_verification(false);
      c = std::move(tls);
    } else {
      c = std::make_unique<httplib::ClientImpl>("127.0.0.1", port_);
    }
    c->set_read_timeout(5, 0);
    for (const auto until = std::chrono::steady_clock::now() + kDeadline;
         std::chrono::steady_clock::now() < until;) {
      auto r = c->Get("/readyz");
      if (r && r->status == 200) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string log() const { return Slurp(log_); }
  int port() const { return port_; }

 private:
  fs::path dir_;
  std::vector<std::string> args_, env_;
  fs::path log_;
  int starts_ = 0;
  pid_t pid_ = -1;
  int port_ = 0;
  bool tls_ = false;
};

TEST_F(RemoteDaemon, ReadsTheDemoFleetAndKeepsItWhileTheDaemonIsDown) {
  const std::string rules =
      Write("rules.yaml",
            "rules:\n  - name: hot\n    condition: temperature_gpu_celsius > 0\n"
            "    severity: warning\n    message: \"GPU {gpu} hot\"\n");
  Daemon daemon(dir_, {"--demo", "-i", "200ms", "--rules", rules});
  const int port = daemon.Start();
  ASSERT_GT(port, 0) << daemon.log();
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();

  RemoteHost host(Endpoint(fmt::format("127.0.0.1:{}", port)));
  EXPECT_EQ(host.endpoint().port, port);
  HostState state;
  std::vector<Event> events;
  ASSERT_TRUE(host.Refresh(state, events)) << state.down;
  EXPECT_EQ(state.down, "");
  EXPECT_EQ(state.label, fmt::format("127.0.0.1:{}", port));
  EXPECT_FALSE(state.hostname.empty());
  EXPECT_NE(state.updated, std::chrono::system_clock::time_point{});
  ASSERT_TRUE(state.snapshot);
  EXPECT_TRUE(state.snapshot->demo);
  EXPECT_EQ(state.snapshot->devices.size(), 8u) << "the demo fleet";
  EXPECT_FALSE(state.snapshot->mig_devices.empty());
  std::set<std::string> uuids;
  for (const DeviceSample& d : state.snapshot->devices) {
    EXPECT_THAT(d.fields[FieldId::kName].text(), HasSubstr("NVIDIA"));
    uuids.insert(d.fields[FieldId::kUuid].text());
  }
  EXPECT_EQ(uuids.size(), 8u);
  EXPECT_TRUE(state.leases) << "the daemon reads its (empty) lease file";
  EXPECT_LE(events.size(), 50u) << "the first answer takes the last 50";

  // The rule fires on every GPU with a temperature: each firing arrives once.
  auto fired = [&] {
    std::multiset<int> gpus;
    for (const Event& e : events) {
      if (e.kind == Event::Kind::kAlertFiring && e.source == "hot" && e.gpu) gpus.insert(*e.gpu);
    }
    return gpus;
  };
  for (const auto until = std::chrono::steady_clock::now() + kDeadline;
       fired().empty() && std::chrono::steady_clock::now() < until;) {
    ASSERT_TRUE(host.Refresh(state, events)) << state.down;
  }
  ASSERT_FALSE(fired().empty()) << daemon.log();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(host.Refresh(state, events)) << state.down;
  std::set<std::string> distinct;
  for (const Event& e : events) distinct.insert(EventDocument(e).dump());
  EXPECT_EQ(distinct.size(), events.size()) << "an event taken twice";
  EXPECT_FALSE(state.alerts.empty());
  for (const auto& a : state.alerts) EXPECT_EQ(a.rule, "hot");

  // Down: the reason, and what it last showed.
  daemon.Kill();
  const auto kept = state.snapshot;
  const auto updated = state.updated;
  events.clear();
  EXPECT_FALSE(host.Refresh(state, events));
  EXPECT_EQ(state.down, "connection refused");
  EXPECT_EQ(state.snapshot, kept);
  EXPECT_EQ(state.updated, updated);
  EXPECT_TRUE(events.empty());

  // Back on the same port: answers again.
  ASSERT_EQ(daemon.Start(port), port) << daemon.log();
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  ASSERT_TRUE(host.Refresh(state, events)) << state.down;
  EXPECT_EQ(state.down, "");
  ASSERT_TRUE(state.snapshot);
  EXPECT_NE(state.snapshot, kept);
  EXPECT_EQ(state.snapshot->devices.size(), 8u);
}

TEST_F(RemoteDaemon, ADaemonWithoutADriverAnswersWithItsReadyzReason) {
  Daemon daemon(dir_, {}, {"GPUWATCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"});
  const int port = daemon.Start();
  ASSERT_GT(port, 0) << daemon.log();
  RemoteHost host(Endpoint(fmt::format("127.0.0.1:{}", port)));
  HostState state;
  std::vector<Event> events;
  bool said = false;
  for (const auto until = std::chrono::steady_clock::now() + kDeadline;
       !said && std::chrono::steady_clock::now() < until;) {
    EXPECT_TRUE(host.Refresh(state, events)) << state.down;
    said = state.down.find("/nonexistent/libnvidia-ml.so.1") != std::string::npos;
    if (!said) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(said) << state.down;
  EXPECT_THAT(state.down, StartsWith("no sample yet: "));
  EXPECT_FALSE(state.snapshot);
}

TEST_F(RemoteDaemon, BasicAuthWantsTheRightPassword) {
  const std::string web =
      Write("web.yml", "basic_auth_users:\n  alice: " + Bcrypt("s3cret") + "\n");
  Daemon daemon(dir_, {"--demo", "--web-config", web});
  const int port = daemon.Start();
  ASSERT_GT(port, 0) << daemon.log();
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  const std::string kCheck = "401 Unauthorized: check --remote-user / GPUWATCH_REMOTE_PASSWORD";
  HostState state;
  std::vector<Event> events;
  RemoteEndpoint e = Endpoint(fmt::format("127.0.0.1:{}", port));
  EXPECT_FALSE(RemoteHost(e).Refresh(state, events));
  EXPECT_EQ(state.down, kCheck) << "no user";
  e.user = "alice";
  e.password = "wrong";
  EXPECT_FALSE(RemoteHost(e).Refresh(state, events));
  EXPECT_EQ(state.down, kCheck);
  EXPECT_FALSE(state.snapshot);
  e.password = "s3cret";
  EXPECT_TRUE(RemoteHost(e).Refresh(state, events)) << state.down;
  EXPECT_EQ(state.down, "");
  ASSERT_TRUE(state.snapshot);
  EXPECT_EQ(state.snapshot->devices.size(), 8u);
}

TEST_F(RemoteDaemon, TlsVerifiesTheServerAgainstTheCaFile) {
  const std::string cmd =
      "cd " + dir_.string() +
      " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 -subj "
      "/CN=test-ca 2>/dev/null && openssl req -newkey rsa:2048 -nodes -keyout server.key -out "
      "server.csr -subj /CN=127.0.0.1 2>/dev/null && printf 'subjectAltName=IP:127.0.0.1' > "
      "san.ext && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out "
      "server.crt -days 1 -extfile san.ext 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string web =
      Write("web.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
  Daemon daemon(dir_, {"--demo", "--web-config", web});
  const int port = daemon.Start();
  ASSERT_GT(port, 0) << daemon.log();
  ASSERT_TRUE(daemon.WaitReady()) << daemon.log();
  HostState state;
  std::vector<Event> events;

  RemoteEndpoint e = Endpoint(fmt::format("https://127.0.0.1:{}", port));
  EXPECT_FALSE(RemoteHost(e).Refresh(state, events)) << "the test CA is not in the system store";
  EXPECT_THAT(state.down, StartsWith("TLS: certificate verify failed: "));
  e.ca_file = (dir_ / "ca.crt").string();
  EXPECT_TRUE(RemoteHost(e).Refresh(state, events)) << state.down;
  EXPECT_EQ(state.down, "");
  ASSERT_TRUE(state.snapshot);
  EXPECT_TRUE(state.snapshot->demo);

  RemoteEndpoint other_name = Endpoint(fmt::format("https://localhost:{}", port));
  other_name.ca_file = e.ca_file;
  EXPECT_FALSE(RemoteHost(other_name).Refresh(state, events)) << "the certificate names 127.0.0.1";
  EXPECT_EQ(state.down, "TLS: certificate verify failed: it does not name localhost");

  RemoteEndpoint insecure = Endpoint(fmt::format("https://127.0.0.1:{}", port));
  insecure.insecure = true;
  EXPECT_TRUE(RemoteHost(insecure).Refresh(state, events)) << state.down;

  RemoteEndpoint bad_ca = e;
  bad_ca.ca_file = (dir_ / "missing.crt").string();
  EXPECT_FALSE(RemoteHost(bad_ca).Refresh(state, events));
  EXPECT_EQ(state.down, "TLS: cannot load the CA bundle " + bad_ca.ca_file);

  EXPECT_FALSE(
      RemoteHost(Endpoint(fmt::format("http://127.0.0.1:{}", port))).Refresh(state, events))
      << "plain HTTP to a TLS port";
  EXPECT_EQ(state.down, "the connection closed without an answer (a TLS port? try https://)");
}

}  // namespace
}  // namespace gpuwatch::tui
