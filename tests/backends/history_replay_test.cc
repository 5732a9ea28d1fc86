// ReplayBackend on SQLite histories written by the real store::HistoryWriter,
// and the format sniff that tells them from JSON Lines recordings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "backends/replay/replay_backend.h"
#include "export/lines.h"
#include "store/history_writer.h"

namespace gpuwatch {
namespace {

namespace fs = std::filesystem;
using replay::ReplayBackend;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using TimePoint = std::chrono::system_clock::time_point;

// 2024-01-01T00:00:00Z, an hour boundary; the store keeps milliseconds.
const TimePoint kHistoryT0{milliseconds(1704067200000)};

class ReplayDir : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    dir_ = fs::temp_directory_path() /
           ("gw-replay-" + std::to_string(getpid()) + "-" + std::to_string(n++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string File(const std::string& name) const { return (dir_ / name).string(); }

  static std::unique_ptr<store::HistoryWriter> Writer(const std::string& path,
                                                      store::HistoryOptions options = {}) {
    auto w = store::HistoryWriter::Open(path, options);
    EXPECT_TRUE(w) << w.status().message();
    return w ? std::move(*w) : nullptr;
  }
  static std::unique_ptr<ReplayBackend> Replay(const std::string& path) {
    auto b = ReplayBackend::Open({path, /*speed=*/0});
    EXPECT_TRUE(b) << b.status().message();
    return b ? std::move(*b) : nullptr;
  }
  static std::string ErrorOf(const std::string& path) {
    auto b = ReplayBackend::Open({path, 0});
    return b ? std::string("no error") : b.error().message();
  }
  static void Sql(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  fs::path dir_;
};

DeviceSample Gpu(int index, double used_bytes) {
  DeviceSample d;
  d.index = index;
  d.fields[FieldId::kIndex] = Reading::Number(index);
  d.fields[FieldId::kUuid] = Reading::Text("GPU-" + std::to_string(index) + "aaa");
  d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(150754820096.0);
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(used_bytes);
  d.fields[FieldId::kUtilizationGpuRatio] = Reading::Number(0.25 * index);
  d.fields[FieldId::kFanSpeedRatio] = Reading::Absent(Missing::kNotSupported);
  return d;
}

ProcessSample Trainer(double used_bytes) {
  ProcessSample p;
  p.pid = 4242;
  p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(used_bytes);
  p.host.visibility = HostProcess::Visibility::kVisible;
  p.host.name = "python";
  p.host.command = "python train.py --lr 0.1";
  p.host.user = "alice";
  p.host.uid = 1000;
  p.host.start_ticks = 5242;
  p.host.start_time = kHistoryT0 - seconds(30);
  p.host.container_id = "0123456789ab";
  p.host.container_runtime = "docker";
  p.host.pod_uid = "pod-1";
  p.host.slurm_job_id = "4242";
  return p;
}

// Sample n: two GPUs at t0 + n s; GPU 0 runs the trainer, GPU 1 a process
// that could not be attributed.
std::shared_ptr<const Snapshot> HistorySample(int n) {
  auto s = std::make_shared<Snapshot>();
  s->time = kHistoryT0 + seconds(n);
  s->sequence = static_cast<std::uint64_t>(n + 1);
  s->devices.push_back(Gpu(0, 1e9 * (n + 1)));
  s->devices.push_back(Gpu(1, 5e8));
  s->devices[0].processes.push_back(Trainer(1e8 * (n + 1)));
  ProcessSample stranger;
  stranger.pid = 777;
  stranger.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(3e8);
  s->devices[1].processes.push_back(stranger);
  return s;
}

void WriteSamples(store::HistoryWriter& w, int from, int to) {
  for (int i = from; i < to; ++i) w.Append(HistorySample(i));
  ASSERT_TRUE(w.Flush().ok());
}

TEST_F(ReplayDir, HistoryOfTheDemoFleetReplaysAsDemo) {
  const std::string path = File("demo.db");
  {
    auto w = Writer(path);
    w->Append(HistorySample(0));
    auto simulated = std::make_shared<Snapshot>(*HistorySample(1));
    simulated->demo = true;
    w->Append(simulated);
    ASSERT_TRUE(w->Flush().ok());
  }
  auto b = Replay(path);
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->info().demo) << "simulated samples are never shown as real ones";
}

TEST_F(ReplayDir, HistoryPlaysSamplesFactsAndProcessesOfEveryGpu) {
  const std::string path = File("h.db");
  WriteSamples(*Writer(path), 0, 3);

  auto b = Replay(path);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->format(), ReplayBackend::Format::kHistory);
  EXPECT_EQ(b->DeviceCount(), 2);
  EXPECT_EQ(b->samples(), 3u);
  EXPECT_EQ(b->ReadHost()[FieldId::kDeviceCount].number(), 2);
  EXPECT_THAT(b->notes(), ::testing::IsEmpty());
  EXPECT_FALSE(b->info().demo);
  for (int i = 0; i < 3; ++i) {
    DeviceSample d0, d1;
    b->ReadDevice(0, AllFields(), true, d0);
    b->ReadDevice(1, AllFields(), true, d1);
    EXPECT_EQ(*b->SampleTime(), kHistoryT0 + seconds(i));
    EXPECT_EQ(b->Finished(), i == 2);

    EXPECT_EQ(d0.fields[FieldId::kName].text(), "NVIDIA H200") << "facts from the devices table";
    EXPECT_EQ(d0.fields[FieldId::kUuid].text(), "GPU-0aaa");
    EXPECT_EQ(d1.fields[FieldId::kUuid].text(), "GPU-1aaa");
    EXPECT_EQ(d0.fields[FieldId::kMemoryTotalBytes].number(), 150754820096.0);
    EXPECT_EQ(d1.fields[FieldId::kIndex].number(), 1);
    EXPECT_EQ(d0.fields[FieldId::kSerial].missing(), Missing::kNotYetSampled)
        << "a fact the history does not keep is absent, never made up";
    EXPECT_EQ(d0.fields[FieldId::kMemoryUsedBytes].number(), 1e9 * (i + 1));
    EXPECT_EQ(d1.fields[FieldId::kMemoryUsedBytes].number(), 5e8);
    EXPECT_EQ(d1.fields[FieldId::kUtilizationGpuRatio].number(), 0.25);
    EXPECT_FALSE(d0.fields[FieldId::kFanSpeedRatio].ok()) << "N/A stays N/A, never 0";

    ASSERT_EQ(d0.processes.size(), 1u);
    const ProcessSample& p = d0.processes[0];
    EXPECT_EQ(p.pid, 4242u);
    EXPECT_EQ(p.fields[FieldId::kProcessUsedMemoryBytes].number(), 1e8 * (i + 1));
    EXPECT_EQ(p.host.visibility, HostProcess::Visibility::kVisible);
    EXPECT_EQ(p.host.name, "python");
    EXPECT_EQ(p.host.command, "python train.py --lr 0.1");
    EXPECT_EQ(p.host.user, "alice");
    EXPECT_EQ(p.host.start_ticks, 5242u);
    EXPECT_EQ(p.host.start_time, kHistoryT0 - seconds(30));
    EXPECT_EQ(p.host.container_id, "0123456789ab");
    EXPECT_EQ(p.host.container_runtime, "docker");
    EXPECT_EQ(p.host.pod_uid, "pod-1");
    EXPECT_EQ(p.host.slurm_job_id, "4242");

    ASSERT_EQ(d1.processes.size(), 1u);
    EXPECT_EQ(d1.processes[0].pid, 777u);
    EXPECT_EQ(d1.processes[0].host.visibility, HostProcess::Visibility::kOtherPidNs)
        << "recorded without attribution";
  }
}

TEST_F(ReplayDir, HistoryEventsAndMarksComeBackInTimeOrder) {
  const std::string path = File("h.db");
  {
    auto w = Writer(path);
    Event alert;
    alert.time = kHistoryT0 + milliseconds(1500);
    alert.kind = Event::Kind::kAlertFiring;
    alert.severity = Severity::kWarning;
    alert.source = "gpu_hot";
    alert.gpu = 1;
    alert.process = ProcessKey{4242, 5242};
    alert.value = 88;
    alert.message = "GPU-1 is hot";
    w->Append(alert);
    w->AppendMark({kHistoryT0 + milliseconds(1200), store::Mark::Kind::kStep, 120.0, "",
                   ProcessKey{4242, 5242}});
    w->AppendMark({kHistoryT0 + milliseconds(100), store::Mark::Kind::kPhase, std::nullopt, "train",
                   std::nullopt});
    w->AppendMark(
        {kHistoryT0 + milliseconds(2500), store::Mark::Kind::kEpoch, 2.5, "", std::nullopt});
    WriteSamples(*w, 0, 3);
  }

  auto b = Replay(path);
  ASSERT_TRUE(b);
  const std::vector<Event>& e = b->events();
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].kind, Event::Kind::kMark);
  EXPECT_EQ(e[0].time, kHistoryT0 + milliseconds(100));
  EXPECT_EQ(e[0].source, "phase");
  EXPECT_EQ(e[0].message, "phase train");
  EXPECT_FALSE(e[0].value);

  EXPECT_EQ(e[1].source, "step");
  EXPECT_EQ(e[1].message, "step 120");
  EXPECT_EQ(e[1].value, 120.0);
  EXPECT_EQ(e[1].process, (ProcessKey{4242, 5242}));

  EXPECT_EQ(e[2].kind, Event::Kind::kAlertFiring);
  EXPECT_EQ(e[2].time, kHistoryT0 + milliseconds(1500));
  EXPECT_EQ(e[2].severity, Severity::kWarning);
  EXPECT_EQ(e[2].source, "gpu_hot");
  EXPECT_EQ(e[2].gpu, 1);
  EXPECT_EQ(e[2].process, (ProcessKey{4242, 5242}));
  EXPECT_EQ(e[2].value, 88.0);
  EXPECT_EQ(e[2].message, "GPU-1 is hot");

  EXPECT_EQ(e[3].message, "epoch 2.5");
  EXPECT_TRUE(b->framework().empty()) << "the history has no framework table yet";
}

TEST_F(ReplayDir, HistoryAnOpenWriterIsWritingCanBeReplayed) {
  const std::string path = File("live.db");
  auto w = Writer(path);
  ASSERT_TRUE(w);
  WriteSamples(*w, 0, 2);
  auto first = Replay(path);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->samples(), 2u);

  WriteSamples(*w, 2, 5);
  auto second = Replay(path);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->samples(), 5u) << "sees what the writer committed since";
  DeviceSample d;
  second->ReadDevice(0, AllFields(), true, d);
  EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].number(), 1e9);
  EXPECT_EQ(d.processes.size(), 1u);
  WriteSamples(*w, 5, 6);  // the writer goes on after being read
  EXPECT_EQ(w->stats().snapshots_written, 6u);
}

TEST_F(ReplayDir, HistoryRawSamplesRemovedByRetentionAreReplayedWithANote) {
  const std::string path = File("old.db");
  store::HistoryOptions options;
  options.retention.raw = std::chrono::minutes(10);
  options.batch_interval = milliseconds(5);
  auto w = Writer(path, options);
  ASSERT_TRUE(w);
  // One sample a minute for three hours: raw keeps only the last 10 minutes
  // once the minute and hour tiers cover the rest.
  for (int m = 0; m <= 180; ++m) {
    auto s = std::make_shared<Snapshot>();
    s->time = kHistoryT0 + std::chrono::minutes(m);
    s->devices.push_back(Gpu(0, 1e9 + m));
    w->Append(std::move(s));
  }
  ASSERT_TRUE(w->Flush().ok());
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  std::size_t samples = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto b = ReplayBackend::Open({path, 0});
    ASSERT_TRUE(b) << b.error().message();
    samples = (*b)->samples();
    if (samples <= 11) break;  // retention has worked the backlog off
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_LE(samples, 11u) << "retention did not run";
  w.reset();

  auto b = Replay(path);
  ASSERT_TRUE(b);
  EXPECT_GE(*b->SampleTime(), kHistoryT0 + std::chrono::minutes(170));
  DeviceSample d;
  b->ReadDevice(0, AllFields(), false, d);
  EXPECT_GE(d.fields[FieldId::kMemoryUsedBytes].number(), 1e9 + 170);
  ASSERT_EQ(b->notes().size(), 1u);
  EXPECT_THAT(b->notes()[0], HasSubstr("retention"));
  EXPECT_THAT(b->notes()[0], HasSubstr("the history at 2024-01-01T00:00:00Z"));
}

TEST_F(ReplayDir, HistoryMigDevicesAreLeftOutWithANote) {
  const std::string path = File("mig.db");
  {
    auto w = Writer(path);
    auto s = std::make_shared<Snapshot>(*HistorySample(0));
    DeviceSample mig = Gpu(0, 1e6);
    mig.mig_index = 1;
    mig.fields[FieldId::kUuid] = Reading::Text("MIG-0001");
    s->mig_devices.push_back(mig);
    w->Append(s);
    ASSERT_TRUE(w->Flush().ok());
  }
  auto b = Replay(path);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->DeviceCount(), 2) << "whole GPUs only, as in --jsonl recordings";
  DeviceSample d;
  b->ReadDevice(0, AllFields(), true, d);
  EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].number(), 1e9) << "the parent, not the MIG device";
  EXPECT_EQ(d.processes.size(), 1u);
  ASSERT_EQ(b->notes().size(), 1u);
  EXPECT_THAT(b->notes()[0], HasSubstr("1 MIG device(s) in the history are not replayed"));
}

TEST_F(ReplayDir, HistoryGpusSeenUnderTwoIdentitiesOrMissingIndicesAreNoted) {
  const std::string path = File("ids.db");
  {
    auto w = Writer(path);
    auto first = std::make_shared<Snapshot>();  // GPU 0's uuid not read yet
    first->time = kHistoryT0;
    first->devices.push_back(Gpu(0, 1e9));
    first->devices[0].fields[FieldId::kUuid] = Reading::Absent(Missing::kFailed);
    first->devices.push_back(Gpu(2, 2e9));
    first->devices[1].fields[FieldId::kName] = Reading::Text("NVIDIA H100");
    auto second = std::make_shared<Snapshot>(*first);
    second->time = kHistoryT0 + seconds(1);
    second->devices[0] = Gpu(0, 3e9);
    w->Append(first);
    w->Append(second);
    ASSERT_TRUE(w->Flush().ok());
  }
  auto b = Replay(path);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->DeviceCount(), 3) << "indices as recorded";
  EXPECT_EQ(b->samples(), 2u);
  DeviceSample d0, d1, d2;
  b->ReadDevice(0, AllFields(), false, d0);
  b->ReadDevice(1, AllFields(), false, d1);
  b->ReadDevice(2, AllFields(), false, d2);
  EXPECT_EQ(d0.fields[FieldId::kMemoryUsedBytes].number(), 1e9);
  EXPECT_EQ(d0.fields[FieldId::kUuid].text(), "GPU-0aaa") << "the identity seen last";
  EXPECT_FALSE(d1.fields[FieldId::kMemoryUsedBytes].ok());
  EXPECT_EQ(d2.fields[FieldId::kName].text(), "NVIDIA H100");
  b->ReadDevice(0, AllFields(), false, d0);
  EXPECT_EQ(d0.fields[FieldId::kMemoryUsedBytes].number(), 3e9) << "one GPU across identities";
  EXPECT_THAT(
      b->notes(),
      ::testing::UnorderedElementsAre(
          "GPU 1 is not in the history: replayed without values",
          "GPU 0 was recorded under 2 identities (index:0, GPU-0aaa): replayed as one GPU"));
}

TEST_F(ReplayDir, HistoryWithDevicesButNoSamplesIsAnError) {
  const std::string path = File("empty-raw.db");
  WriteSamples(*Writer(path), 0, 2);
  Sql(path, "DELETE FROM process_raw; DELETE FROM device_raw");
  const std::string message = ErrorOf(path);
  EXPECT_THAT(message, HasSubstr(path + ": no samples"));
  EXPECT_THAT(message, HasSubstr("lists 2 GPU(s) but holds no raw samples"));
}

TEST_F(ReplayDir, HistoryWithoutGpusIsAnError) {
  const std::string path = File("no-gpus.db");
  {
    auto w = Writer(path);
    w->AppendMark({kHistoryT0, store::Mark::Kind::kStep, 1.0, "", std::nullopt});
    ASSERT_TRUE(w->Flush().ok());
  }
  EXPECT_THAT(ErrorOf(path), HasSubstr(path + ": no samples (the history holds no GPUs)"));
}

TEST_F(ReplayDir, BadFilesAreErrorsNamingTheFile) {
  const std::string empty = File("empty.db");
  std::ofstream(empty).close();
  EXPECT_THAT(ErrorOf(empty), HasSubstr(empty + ": empty file"));

  const std::string noise = File("noise.bin");
  std::ofstream(noise, std::ios::binary) << std::string("\x01\x02\xff\xfe random bytes\n", 19);
  EXPECT_THAT(ErrorOf(noise), HasSubstr(noise + ":1: not a JSON object"));

  const std::string corrupt = File("corrupt.db");
  std::ofstream(corrupt, std::ios::binary)
      << std::string("SQLite format 3\0", 16) << std::string(4000, '\x5a');
  EXPECT_THAT(ErrorOf(corrupt), HasSubstr("'" + corrupt + "'"));

  const std::string foreign = File("foreign.db");
  Sql(foreign, "CREATE TABLE songs(title TEXT); INSERT INTO songs VALUES('x')");
  EXPECT_THAT(ErrorOf(foreign), HasSubstr("'" + foreign + "': not a gpuwatch history"));

  // Says it is a gpuwatch history (application id, version) but has no tables.
  const std::string hollow = File("hollow.db");
  Sql(hollow, "PRAGMA application_id=1735423860; PRAGMA user_version=1; CREATE TABLE x(y)");
  EXPECT_THAT(ErrorOf(hollow), HasSubstr("'" + hollow +
                                         "': not a gpuwatch history (missing tables: devices, "
                                         "processes, events, marks, device_raw, process_raw)"));

  EXPECT_THAT(ErrorOf(dir_.string()), HasSubstr(dir_.string() + " is a directory"));
  auto missing = ReplayBackend::Open({File("nope.db"), 0});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Status::Code::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr(File("nope.db")));
}

TEST_F(ReplayDir, FormatIsToldByContentNotByName) {
  const std::string history = File("looks-like.jsonl");
  WriteSamples(*Writer(history), 0, 2);
  auto h = Replay(history);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->format(), ReplayBackend::Format::kHistory);
  EXPECT_EQ(h->samples(), 2u);

  const std::string lines = File("looks-like.db");
  std::ofstream(lines) << JsonlHeader(*HistorySample(0), "node-1") << "\n"
                       << JsonlSample(*HistorySample(0)) << "\n";
  auto j = Replay(lines);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->format(), ReplayBackend::Format::kJsonLines);
  EXPECT_EQ(j->hostname(), "node-1");
  EXPECT_EQ(j->DeviceCount(), 2);
}

// A damaged or forged history: indices that would size the replay (100000
// GPUs took 2.2 GB; 99999999999 had no bound) are refused, naming the table
// and the value.
TEST_F(ReplayDir, HistoryDeviceIndexOutsideTheRangeIsRefusedNamingTableAndValue) {
  const std::string path = File("forged.db");
  WriteSamples(*Writer(path), 0, 2);
  for (const std::string idx : {"100000", "99999999999", "-1", "64"}) {
    Sql(path, "UPDATE devices SET idx = " + idx + " WHERE uuid = 'GPU-1aaa'");
    const std::string message = ErrorOf(path);
    EXPECT_THAT(message, HasSubstr("history database '" + path + "'")) << idx;
    EXPECT_THAT(message, HasSubstr("table devices: idx " + idx + " (row id ")) << idx;
    EXPECT_THAT(message, HasSubstr("is outside 0..63")) << idx;
  }
  Sql(path, "UPDATE devices SET idx = 63 WHERE uuid = 'GPU-1aaa'");
  auto highest = Replay(path);
  ASSERT_TRUE(highest) << "63 is a GPU index like any other";
  EXPECT_EQ(highest->DeviceCount(), 64);
  Sql(path, "UPDATE devices SET idx = 1, mig_index = 100000 WHERE uuid = 'GPU-1aaa'");
  EXPECT_THAT(ErrorOf(path), HasSubstr("table devices: mig_index 100000 (row id "));
}

TEST_F(ReplayDir, HistoryMustBeARegularFile) {
  const std::string fifo = File("pipe.db");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ErrorOf(fifo), HasSubstr(fifo + " is a FIFO, not a regular file"));
  auto direct = replay::ReadHistoryRecording(fifo);
  ASSERT_FALSE(direct);
  EXPECT_THAT(direct.error().message(), HasSubstr(fifo + " is a FIFO"));
  EXPECT_THAT(replay::ReadHistoryRecording("/dev/zero").error().message(),
              HasSubstr("/dev/zero is a character device"));
  const std::string link = File("link.db");
  WriteSamples(*Writer(File("real.db")), 0, 2);
  fs::create_symlink(File("real.db"), link);
  auto b = Replay(link);
  ASSERT_TRUE(b) << "a link to a regular file is that file";
  EXPECT_EQ(b->samples(), 2u);
}

}  // namespace
}  // namespace gpuwatch
