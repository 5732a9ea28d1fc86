#include "store/history_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "store/history_reader.h"
#include "store_test_util.h"

namespace gpuwatch::store {
namespace {

using testing::At;
using ::testing::HasSubstr;
using testing::OneDevice;
using testing::QueryNumber;
using testing::QueryText;
using testing::ScratchDir;

std::unique_ptr<HistoryWriter> OpenWriter(const std::string& path, HistoryOptions opts = {}) {
  auto w = HistoryWriter::Open(path, opts);
  EXPECT_TRUE(w.has_value()) << w.status().message();
  return w ? std::move(*w) : nullptr;
}

TEST(HistoryWriter, SnapshotsRoundTripWithExactNumbers) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  auto snap = std::make_shared<Snapshot>();
  snap->time = At(1234);
  DeviceSample d0 = testing::MakeDevice(0, 68719476736.0);
  d0.fields[FieldId::kUtilizationGpuRatio] = Reading::Number(0.7213);
  d0.fields[FieldId::kTemperatureGpuCelsius] = Reading::Number(69);
  d0.fields[FieldId::kPowerDrawWatts] = Reading::Number(412.125);
  d0.processes.push_back(testing::MakeProcess(4242, 1073741824.0));
  d0.processes[0].fields[FieldId::kProcessCpuRatio] = Reading::Number(0.999);
  snap->devices.push_back(d0);
  snap->devices.push_back(testing::MakeDevice(1, 1.5));
  {
    auto w = OpenWriter(path);
    w->Append(snap);
    ASSERT_TRUE(w->Flush().ok());
    EXPECT_EQ(w->stats().snapshots_written, 1u);
  }

  auto r = HistoryReader::Open(path);
  ASSERT_TRUE(r.has_value()) << r.status().message();
  auto devices = r->Devices();
  ASSERT_TRUE(devices.has_value());
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].uuid, "GPU-00000000");
  EXPECT_EQ((*devices)[0].name, "NVIDIA H200");
  EXPECT_EQ((*devices)[0].memory_total_bytes, 150754820096.0);
  EXPECT_EQ((*devices)[1].index, 1);

  const FieldId fields[] = {FieldId::kMemoryUsedBytes, FieldId::kUtilizationGpuRatio,
                            FieldId::kTemperatureGpuCelsius, FieldId::kPowerDrawWatts};
  auto series = r->DeviceSamples((*devices)[0].id, fields, At(0), At(2000));
  ASSERT_TRUE(series.has_value()) << series.status().message();
  EXPECT_EQ(series->tier, Tier::kRaw);
  ASSERT_EQ(series->points.size(), 1u);
  const SeriesPoint& p = series->points[0];
  EXPECT_EQ(p.time, At(1234));
  EXPECT_EQ(p.values[0].avg, 68719476736.0);
  EXPECT_EQ(p.values[1].avg, 0.7213);
  EXPECT_EQ(p.values[2].avg, 69.0);
  EXPECT_EQ(p.values[3].max, 412.125);

  auto procs = r->Processes(At(0), At(2000));
  ASSERT_TRUE(procs.has_value());
  ASSERT_EQ(procs->size(), 1u);
  const ProcessRecord& pr = (*procs)[0];
  EXPECT_EQ(pr.key.pid, 4242u);
  EXPECT_EQ(pr.key.start_ticks, 1000u + 4242u);
  EXPECT_EQ(pr.device_id, (*devices)[0].id);
  EXPECT_EQ(pr.user, "alice");
  EXPECT_EQ(pr.command, "python train.py --lr 0.1");
  EXPECT_EQ(pr.container_id, "0123456789ab");
  EXPECT_EQ(pr.slurm_job_id, "4242");
  const FieldId pfields[] = {FieldId::kProcessUsedMemoryBytes, FieldId::kProcessCpuRatio,
                             FieldId::kProcessRssBytes};
  auto ps = r->ProcessSamples(pr.id, pfields, At(0), At(2000));
  ASSERT_TRUE(ps.has_value()) << ps.status().message();
  ASSERT_EQ(ps->points.size(), 1u);
  EXPECT_EQ(ps->points[0].values[0].avg, 1073741824.0);
  EXPECT_EQ(ps->points[0].values[1].avg, 0.999);
  EXPECT_EQ(ps->points[0].values[2].avg, std::nullopt);
}

TEST(HistoryWriter, NotAvailableIsStoredAsAbsentNotZero) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  {
    auto w = OpenWriter(path);
    w->Append(OneDevice(0, 5.0));  // fan: not supported
    ASSERT_TRUE(w->Flush().ok());
  }
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_raw WHERE fan_speed_ratio IS NULL"), 1);
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_raw WHERE fan_speed_ratio = 0"), 0);
  auto r = HistoryReader::Open(path);
  ASSERT_TRUE(r.has_value());
  const FieldId fields[] = {FieldId::kFanSpeedRatio};
  auto series = r->DeviceSamples(1, fields, At(0), At(1000));
  ASSERT_TRUE(series.has_value());
  ASSERT_EQ(series->points.size(), 1u);
  EXPECT_EQ(series->points[0].values[0], Aggregate{});
}

TEST(HistoryWriter, EventsAndMarksRoundTrip) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  Event e;
  e.time = At(5000);
  e.kind = Event::Kind::kLeakSuspected;
  e.severity = Severity::kWarning;
  e.source = "leak";
  e.gpu = 3;
  e.process = ProcessKey{77, 123456};
  e.value = 1048576.5;
  e.message = "memory grows 1.0 MiB/min; out of memory in ~2 h";
  Event bare;
  bare.time = At(6000);
  bare.kind = Event::Kind::kDeviceLost;
  bare.severity = Severity::kCritical;
  bare.source = "sampler";
  bare.message = "GPU 0 fell off the bus";
  Mark step{At(5500), Mark::Kind::kStep, 100.0, "", ProcessKey{77, 123456}};
  Mark phase{At(5600), Mark::Kind::kPhase, std::nullopt, "eval", std::nullopt};
  {
    auto w = OpenWriter(path);
    w->Append(e);
    w->Append(bare);
    w->AppendMark(step);
    w->AppendMark(phase);
    ASSERT_TRUE(w->Flush().ok());
    EXPECT_EQ(w->stats().events_written, 4u);
  }
  auto r = HistoryReader::Open(path);
  ASSERT_TRUE(r.has_value());
  auto events = r->Events(At(0), At(10000));
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 2u);
  const Event& got = (*events)[0];
  EXPECT_EQ(got.time, e.time);
  EXPECT_EQ(got.kind, e.kind);
  EXPECT_EQ(got.severity, e.severity);
  EXPECT_EQ(got.source, e.source);
  EXPECT_EQ(got.gpu, e.gpu);
  ASSERT_TRUE(got.process.has_value());
  EXPECT_EQ(*got.process, *e.process);
  EXPECT_EQ(got.value, e.value);
  EXPECT_EQ(got.message, e.message);
  EXPECT_EQ((*events)[1].kind, Event::Kind::kDeviceLost);
  EXPECT_EQ((*events)[1].severity, Severity::kCritical);
  EXPECT_FALSE((*events)[1].gpu.has_value());
  EXPECT_FALSE((*events)[1].process.has_value());
  EXPECT_FALSE((*events)[1].value.has_value());

  auto marks = r->Marks(At(0), At(10000));
  ASSERT_TRUE(marks.has_value());
  ASSERT_EQ(marks->size(), 2u);
  EXPECT_EQ((*marks)[0], step);
  EXPECT_EQ((*marks)[1], phase);
  auto none = r->Marks(At(5501), At(5600));  // half-open range
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

TEST(HistoryWriter, UnwritablePathFailsNamingThePath) {
  ScratchDir dir;
  const std::string file = dir.File("not-a-dir");
  std::ofstream(file) << "x";
  const std::string path = file + "/history.db";
  auto w = HistoryWriter::Open(path);
  ASSERT_FALSE(w.has_value());
  EXPECT_THAT(w.error().message(), HasSubstr(path));
}

TEST(HistoryWriter, FileOfAnotherKindIsRefused) {
  ScratchDir dir;
  const std::string path = dir.File("notes.txt");
  std::ofstream(path) << "this is not a database, it is a long enough text file to be read";
  auto w = HistoryWriter::Open(path);
  ASSERT_FALSE(w.has_value());
  EXPECT_THAT(w.error().message(), HasSubstr(path));
}

TEST(HistoryWriter, AFifoOrADeviceIsRefusedNamingWhatItIs) {
  ScratchDir dir;
  const std::string fifo = dir.File("pipe.db");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& [path, kind] :
       {std::pair<std::string, std::string>{fifo, "a FIFO"}, {"/dev/zero", "a character device"}}) {
    auto w = HistoryWriter::Open(path);
    ASSERT_FALSE(w.has_value()) << path;
    EXPECT_THAT(w.error().message(), HasSubstr(path + " is " + kind + ", not a regular file"));
  }
}

TEST(HistoryWriter, UsesWalMode) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  { auto w = OpenWriter(path); }
  EXPECT_EQ(QueryText(path, "PRAGMA journal_mode"), "wal");
}

TEST(HistoryWriter, DestructionWritesEverythingQueued) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  HistoryOptions opts;
  opts.batch_interval = std::chrono::hours(1);  // only the close can write them
  {
    auto w = OpenWriter(path, opts);
    for (int i = 0; i < 5; ++i) w->Append(OneDevice(i * 1000, i));
  }
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_raw"), 5);
}

TEST(HistoryWriter, EverySnapshotIsWrittenOrCountedAsDropped) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  HistoryOptions opts;
  opts.queue_capacity = 2;
  constexpr int kN = 3000;
  WriterStats stats;
  {
    auto w = OpenWriter(path, opts);
    for (int i = 0; i < kN; ++i) w->Append(OneDevice(i, i));
    ASSERT_TRUE(w->Flush().ok());
    stats = w->stats();
  }
  EXPECT_EQ(stats.snapshots_appended, static_cast<std::uint64_t>(kN));
  EXPECT_EQ(stats.snapshots_written + stats.snapshots_dropped, static_cast<std::uint64_t>(kN));
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_raw"),
            static_cast<std::int64_t>(stats.snapshots_written));
  // The newest snapshot is never the one dropped.
  EXPECT_EQ(QueryNumber(path, "SELECT max(memory_used_bytes) FROM device_raw"), kN - 1);
}

TEST(HistoryWriter, StaleSnapshotsAreNotStoredAgain) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  {
    auto w = OpenWriter(path);
    w->Append(OneDevice(0, 1));
    auto stale = std::make_shared<Snapshot>(*OneDevice(0, 1));
    stale->stale = true;
    w->Append(stale);
    ASSERT_TRUE(w->Flush().ok());
    EXPECT_EQ(w->stats().snapshots_stale, 1u);
  }
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_raw"), 1);
}

TEST(HistoryWriter, AStaleGpuInALiveSnapshotIsAGapNotARepeat) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  {
    auto w = OpenWriter(path);
    w->Append(OneDevice(0, 1));
    auto next = std::make_shared<Snapshot>(*OneDevice(1000, 1));
    next->devices[0].health = DeviceHealth::kStale;  // in a hung call: its last values
    w->Append(next);
    ASSERT_TRUE(w->Flush().ok());
  }
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_raw"), 1);
}

TEST(HistoryWriter, ReopeningKeepsDevicesAndAppends) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  for (int run = 0; run < 2; ++run) {
    auto w = OpenWriter(path);
    w->Append(OneDevice(run * 1000, run));
    ASSERT_TRUE(w->Flush().ok());
  }
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM devices"), 1);
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_raw"), 2);
  EXPECT_EQ(QueryNumber(path, "SELECT last_seen - first_seen FROM devices"), 1000);
}

TEST(HistoryWriter, FieldMissingFromAnOlderFileGetsItsColumn) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  { auto w = OpenWriter(path); }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "ALTER TABLE device_raw DROP COLUMN fan_speed_ratio", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto w = OpenWriter(path);
  auto s = std::make_shared<Snapshot>(*OneDevice(0, 1));
  s->devices[0].fields[FieldId::kFanSpeedRatio] = Reading::Number(0.25);
  w->Append(s);
  ASSERT_TRUE(w->Flush().ok());
  EXPECT_EQ(QueryText(path, "SELECT fan_speed_ratio FROM device_raw"), "0.25");
}

TEST(HistoryReader, AskingForAFieldNotKeptIsAnError) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  { auto w = OpenWriter(path); }
  auto r = HistoryReader::Open(path);
  ASSERT_TRUE(r.has_value());
  const FieldId fields[] = {FieldId::kName};
  auto series = r->DeviceSamples(1, fields, At(0), At(1));
  ASSERT_FALSE(series.has_value());
  EXPECT_THAT(series.error().message(), HasSubstr("name"));
}

TEST(HistoryReader, MissingFileIsAnErrorNamingIt) {
  ScratchDir dir;
  const std::string path = dir.File("absent.db");
  auto r = HistoryReader::Open(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(), HasSubstr(path));
}

}  // namespace
}  // namespace gpuwatch::store
