// DaemonBackend: a daemon's answer stands in for reading the GPUs: what the
// fake NVML gives, collected and answered, reads back the same, reasons and
// the driver's words included; an answer for other GPUs, with MIG devices,
// or too old is refused; loops follow the daemon; a daemon that stops
// answering leaves its last sample marked stale.
#include "backends/replay/daemon_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "core/mutex.h"
#include "export/lines.h"
#include "fake_env.h"
#include "sampler/collect.h"
#include "transport/answer_socket.h"

namespace gpuwatch {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using replay::DaemonBackend;
using replay::DaemonIdentity;

std::string AnswerFor(const Snapshot& snap, const DaemonIdentity& id) {
  return replay::DaemonIdentityLine(id) + "\n" + JsonlHeader(snap, "host1") + "\n" +
         JsonlSample(snap, JsonlDetail::kAnswer) + "\n";
}

class DaemonBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gw-daemon-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(dir_);
  }
  // Serves whatever `answer_` holds when asked.
  void Serve() {
    auto s = AnswerSocket::Create(Path(), [this] {
      MutexLock lock(mu_);
      return std::make_shared<const std::string>(answer_);
    });
    ASSERT_TRUE(s) << s.error().message();
    server_ = std::move(*s);
  }
  void SetAnswer(std::string text) {
    MutexLock lock(mu_);
    answer_ = std::move(text);
  }
  std::string Path() const { return (dir_ / "daemon.sock").string(); }
  replay::DaemonExpectation Expect(const std::string& source = "nvml") const {
    return {Path(), source, 2s};
  }

  fs::path dir_;
  Mutex mu_;
  std::string answer_ GUARDED_BY(mu_);
  std::unique_ptr<AnswerSocket> server_;
};

// One snapshot of the fake's fixed scenario, read as a one-shot command does.
Snapshot FakeSnapshot(const std::string& scenario) {
  auto nvml = testing::OpenFake(scenario, 10);
  CollectOptions all;
  all.mig = false;
  Snapshot s = CollectOnce(*nvml, nullptr, all);
  s.time = std::chrono::system_clock::now();
  return s;
}

TEST_F(DaemonBackendTest, AnAnswerReadsBackAsTheGpusWereRead) {
  for (const std::string scenario : {"fixed.yaml", "unsupported.yaml", "lost.yaml"}) {
    SCOPED_TRACE(scenario);
    const Snapshot read = FakeSnapshot(scenario);
    DaemonIdentity id;
    id.source = "nvml";
    id.library = "/usr/lib/libnvidia-ml.so.1";
    SetAnswer(AnswerFor(read, id));
    if (!server_) Serve();
    auto b = DaemonBackend::Connect(Expect());
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ((*b)->info().library_path, "/usr/lib/libnvidia-ml.so.1");
    EXPECT_FALSE((*b)->info().recording) << "outputs say nvml:, not replay:";
    CollectOptions all;
    all.mig = false;
    const Snapshot answered = CollectOnce(**b, nullptr, all);
    EXPECT_EQ(answered.source, "nvml:/usr/lib/libnvidia-ml.so.1");
    EXPECT_EQ(
        std::chrono::duration_cast<std::chrono::milliseconds>(answered.time.time_since_epoch()),
        std::chrono::duration_cast<std::chrono::milliseconds>(read.time.time_since_epoch()))
        << "the time the daemon read it";
    EXPECT_EQ(answered.host, read.host);
    ASSERT_EQ(answered.devices.size(), read.devices.size());
    for (std::size_t i = 0; i < read.devices.size(); ++i) {
      const DeviceSample& want = read.devices[i];
      const DeviceSample& got = answered.devices[i];
      EXPECT_EQ(got.health, want.health);
      EXPECT_EQ(got.health_detail, want.health_detail);
      const FieldRange r = RangeOf(Scope::kDevice);
      for (std::size_t f = r.first; f < r.first + r.count; ++f) {
        const auto field = static_cast<FieldId>(f);
        EXPECT_EQ(got.fields[field], want.fields[field])
            << "GPU " << i << " " << Info(field).key << ": the value, or the reason and the "
            << "driver's words";
      }
      ASSERT_EQ(got.processes.size(), want.processes.size());
      for (std::size_t p = 0; p < want.processes.size(); ++p) {
        EXPECT_EQ(got.processes[p].pid, want.processes[p].pid);
        EXPECT_EQ(got.processes[p].host.command, want.processes[p].host.command);
        EXPECT_EQ(got.processes[p].fields[FieldId::kProcessUsedMemoryBytes],
                  want.processes[p].fields[FieldId::kProcessUsedMemoryBytes]);
      }
    }
  }
}

TEST_F(DaemonBackendTest, AnAnswerForOtherGpusIsRefused) {
  DaemonIdentity id;
  id.source = "nvml:/tmp/libnvidia-ml-fake.so scenario:a.yaml";
  SetAnswer(AnswerFor(FakeSnapshot("fixed.yaml"), id));
  Serve();
  auto b = DaemonBackend::Connect(Expect("nvml"));
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code(), Status::Code::kUnavailable);
  EXPECT_NE(b.error().message().find("reads other GPUs"), std::string::npos);
  EXPECT_TRUE(DaemonBackend::Connect(Expect(id.source))) << "the same key is believed";
}

TEST_F(DaemonBackendTest, MigDevicesOrAnOldSampleSendTheCallerToTheGpus) {
  Snapshot snap = FakeSnapshot("fixed.yaml");
  DaemonIdentity id;
  id.source = "nvml";
  id.mig = true;
  SetAnswer(AnswerFor(snap, id));
  Serve();
  auto mig = DaemonBackend::Connect(Expect());
  ASSERT_FALSE(mig);
  EXPECT_NE(mig.error().message().find("MIG"), std::string::npos);

  id.mig = false;
  id.interval = 1s;
  snap.time = std::chrono::system_clock::now() - 6s;  // more than 3 intervals and 5 s
  SetAnswer(AnswerFor(snap, id));
  auto old = DaemonBackend::Connect(Expect());
  ASSERT_FALSE(old);
  EXPECT_NE(old.error().message().find("has not sampled for 6 s"), std::string::npos)
      << old.error().message();
  id.interval = 10s;  // a slow daemon's sample is still its latest
  SetAnswer(AnswerFor(snap, id));
  EXPECT_TRUE(DaemonBackend::Connect(Expect()));
}

TEST_F(DaemonBackendTest, EachRoundAsksAgainAndADaemonGoneLeavesItsLastSampleStale) {
  Snapshot snap = FakeSnapshot("fixed.yaml");
  DaemonIdentity id;
  id.source = "nvml";
  snap.devices[0].fields[FieldId::kMemoryUsedBytes] = Reading::Number(1000);
  SetAnswer(AnswerFor(snap, id));
  Serve();
  auto b = DaemonBackend::Connect(Expect());
  ASSERT_TRUE(b) << b.error().message();
  CollectOptions o;
  o.mig = false;
  EXPECT_EQ(CollectOnce(**b, nullptr, o).devices[0].fields[FieldId::kMemoryUsedBytes].number(),
            1000);
  snap.devices[0].fields[FieldId::kMemoryUsedBytes] = Reading::Number(2000);
  SetAnswer(AnswerFor(snap, id));
  EXPECT_EQ(CollectOnce(**b, nullptr, o).devices[0].fields[FieldId::kMemoryUsedBytes].number(),
            2000)
      << "the second round is the daemon's next sample";
  server_.reset();  // the daemon stops
  const Snapshot last = CollectOnce(**b, nullptr, o);
  EXPECT_EQ(last.devices[0].fields[FieldId::kMemoryUsedBytes].number(), 2000);
  EXPECT_EQ(last.devices[0].health, DeviceHealth::kStale);
  EXPECT_NE(last.devices[0].health_detail.find("not current"), std::string::npos);
}

TEST(DaemonAnswer, ABadAnswerIsAnErrorNamingWhatIsWrong) {
  EXPECT_NE(replay::ParseDaemonAnswer("", "d").error().message().find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(replay::ParseDaemonAnswer("{\"type\":\"header\"}\n", "d")
                .error()
                .message()
                .find("not a daemon's identity"),
            std::string::npos);
  EXPECT_NE(replay::ParseDaemonAnswer("{\"type\":\"daemon\",\"interval_ms\":\"x\"}\n{}", "d")
                .error()
                .message()
                .find("interval_ms"),
            std::string::npos);
  EXPECT_NE(
      replay::ParseDaemonAnswer("{\"type\":\"daemon\"}", "d").error().message().find("no sample"),
      std::string::npos);
  EXPECT_NE(replay::ParseDaemonAnswer("{\"type\":\"daemon\"}\n{\"type\":\"header\",\"schema\":"
                                      "\"gpuwatch.jsonl/1\",\"devices\":[]}\n",
                                      "d")
                .error()
                .message()
                .find("no samples"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuwatch
