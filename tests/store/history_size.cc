// Not a test: measures how many bytes the history takes per GPU-day at 1 Hz
// (docs/history.md). Writes `hours` of simulated H200 samples (every field
// an H200 reports, with noise; `procs` processes per GPU) through
// HistoryWriter, rolls them up, and prints the size of each table. With
// --narrow it also writes the same raw samples as one row per
// (ts, device, field) for comparison. Then it times the question a chart
// asks: the last 24 hours of one GPU (the tier ChooseTier picks), for four
// fields and for every stored field, each the median and the slowest of 20.
//
//   history_size OUT.db [gpus=1] [procs=2] [hours=24] [--narrow]
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "store/history_reader.h"
#include "store/history_writer.h"
#include "store/rollup.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace gs = gpuwatch::store;
using gpuwatch::DeviceSample;
using gpuwatch::FieldId;
using gpuwatch::ProcessSample;
using gpuwatch::Reading;
using gpuwatch::Snapshot;

namespace {

std::shared_ptr<const Snapshot> Simulate(std::int64_t sec, int gpus, int procs, std::mt19937& rng) {
  std::normal_distribution<double> noise(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto s = std::make_shared<Snapshot>();
  s->time = gs::TimePoint(std::chrono::seconds(1704067200 + sec));
  for (int g = 0; g < gpus; ++g) {
    DeviceSample d;
    d.index = g;
    auto set = [&](FieldId id, double v) { d.fields[id] = Reading::Number(v); };
    d.fields[FieldId::kUuid] = Reading::Text("GPU-" + std::to_string(g));
    d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
    const double total = 150754820096.0;
    const double used = 60e9 + 1e9 * std::sin(sec / 300.0) + 4096 * std::floor(1e4 * unit(rng));
    set(FieldId::kMemoryTotalBytes, total);
    set(FieldId::kMemoryUsedBytes, used);
    set(FieldId::kMemoryFreeBytes, total - used - 600e6);
    set(FieldId::kMemoryReservedBytes, 600e6);
    set(FieldId::kMemoryUsedRatio, used / total);
    set(FieldId::kBar1UsedBytes, 2097152 * std::floor(1 + 4 * unit(rng)));
    set(FieldId::kUtilizationGpuRatio, std::round(70 + 10 * noise(rng)) / 100);
    set(FieldId::kUtilizationMemoryRatio, std::round(40 + 10 * noise(rng)) / 100);
    set(FieldId::kUtilizationEncoderRatio, 0);
    set(FieldId::kUtilizationDecoderRatio, 0);
    set(FieldId::kTemperatureGpuCelsius, std::round(65 + 3 * noise(rng)));
    set(FieldId::kTemperatureMemoryCelsius, std::round(60 + 3 * noise(rng)));
    set(FieldId::kPowerDrawWatts, std::round(400000 + 30000 * noise(rng)) / 1000);
    set(FieldId::kPowerDrawInstantWatts, std::round(400000 + 60000 * noise(rng)) / 1000);
    set(FieldId::kPowerDrawAverageWatts, std::round(400000 + 20000 * noise(rng)) / 1000);
    set(FieldId::kEnergyJoules, std::floor((sec - sec % 5) * 400.123));
    set(FieldId::kClockGraphicsHertz, 1980e6 - 15e6 * std::floor(3 * unit(rng)));
    set(FieldId::kClockSmHertz, 1980e6 - 15e6 * std::floor(3 * unit(rng)));
    set(FieldId::kClockMemoryHertz, 2619e6);
    set(FieldId::kPerformanceState, 0);
    set(FieldId::kClockEventReasons, unit(rng) < 0.9 ? 0 : 4);
    d.fields[FieldId::kFanSpeedRatio] = Reading::Absent(gpuwatch::Missing::kNotSupported);
    set(FieldId::kPcieTxBytesPerSecond, 1024 * std::floor(1e5 * unit(rng)));
    set(FieldId::kPcieRxBytesPerSecond, 1024 * std::floor(1e5 * unit(rng)));
    set(FieldId::kPowerLimitWatts, 700);
    set(FieldId::kPowerLimitEnforcedWatts, 700);
    set(FieldId::kPcieLinkGenCurrent, 5);
    set(FieldId::kPcieLinkWidthCurrent, 16);
    for (FieldId id :
         {FieldId::kEccErrorsCorrectedVolatile, FieldId::kEccErrorsUncorrectedVolatile,
          FieldId::kEccErrorsCorrectedAggregate, FieldId::kEccErrorsUncorrectedAggregate,
          FieldId::kRemappedRowsCorrectable, FieldId::kRemappedRowsUncorrectable,
          FieldId::kRemappedRowsPending, FieldId::kRemappedRowsFailure}) {
      set(id, 0);
    }
    for (int p = 0; p < procs; ++p) {
      ProcessSample ps;
      ps.pid = static_cast<std::uint32_t>(1000 + p);
      ps.host.start_ticks = 5000 + static_cast<std::uint64_t>(p);
      ps.host.user = "alice";
      ps.host.command = "python train.py";
      auto pset = [&](FieldId id, double v) { ps.fields[id] = Reading::Number(v); };
      pset(FieldId::kProcessUsedMemoryBytes, 1048576 * std::floor(20000 + 100 * unit(rng)));
      pset(FieldId::kProcessSmUtilizationRatio, std::round(60 + 10 * noise(rng)) / 100);
      pset(FieldId::kProcessMemoryUtilizationRatio, std::round(30 + 10 * noise(rng)) / 100);
      pset(FieldId::kProcessEncoderUtilizationRatio, 0);
      pset(FieldId::kProcessDecoderUtilizationRatio, 0);
      pset(FieldId::kProcessRssBytes, 4096 * std::floor(2e6 + 1e3 * unit(rng)));
      pset(FieldId::kProcessCpuRatio, std::round(1000 * (0.98 + 0.05 * noise(rng))) / 1000);
      d.processes.push_back(std::move(ps));
    }
    s->devices.push_back(std::move(d));
  }
  return s;
}

void PrintTables(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT name, sum(pgsize), sum(ncell) FROM dbstat GROUP BY name "
                         "ORDER BY 2 DESC",
                         -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::printf("  %-28s %12lld bytes\n", sqlite3_column_text(st, 0),
                  static_cast<long long>(sqlite3_column_int64(st, 1)));
    }
  } else {
    std::printf("  (no dbstat: %s)\n", sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// The alternative: one row per (ts, device, field) keyed for reading one
// field of one device over time.
void WriteNarrow(const std::string& path, int gpus, int procs, std::int64_t seconds) {
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db,
               "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
               "CREATE TABLE narrow(ts INTEGER, device_id INTEGER, field_id INTEGER, value REAL, "
               "PRIMARY KEY(device_id, field_id, ts)) WITHOUT ROWID",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* ins = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO narrow VALUES(?1, ?2, ?3, ?4)", -1, &ins, nullptr);
  std::mt19937 rng(1);
  const auto fields = gs::StoredFields(gpuwatch::Scope::kDevice);
  for (std::int64_t sec = 0; sec < seconds; ++sec) {
    if (sec % 3600 == 0) sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    auto s = Simulate(sec, gpus, procs, rng);
    for (const DeviceSample& d : s->devices) {
      for (FieldId id : fields) {
        const Reading& r = d.fields[id];
        if (!r.is_number()) continue;
        sqlite3_bind_int64(ins, 1, (1704067200 + sec) * 1000);
        sqlite3_bind_int(ins, 2, d.index);
        sqlite3_bind_int(ins, 3, static_cast<int>(id));
        sqlite3_bind_double(ins, 4, r.number());
        sqlite3_step(ins);
        sqlite3_reset(ins);
      }
    }
    if (sec % 3600 == 3599 || sec + 1 == seconds) {
      sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    }
  }
  sqlite3_finalize(ins);
  sqlite3_close(db);
  std::printf("narrow device samples (%lld s, %d GPU): %ju bytes\n",
              static_cast<long long>(seconds), gpus,
              static_cast<std::uintmax_t>(std::filesystem::file_size(path)));
}

// Times HistoryReader::DeviceSamples over the 24 hours before `end` for GPU 0.
void TimeDayQuery(const std::string& path, std::int64_t end_s) {
  auto reader = gs::HistoryReader::Open(path);
  if (!reader) return;
  auto devices = reader->Devices();
  if (!devices || devices->empty()) return;
  const std::int64_t id = devices->front().id;
  const gs::TimePoint to(std::chrono::seconds(1704067200 + end_s));
  const gs::TimePoint from = to - std::chrono::hours(24);
  const std::vector<FieldId> four = {FieldId::kMemoryUsedBytes, FieldId::kUtilizationGpuRatio,
                                     FieldId::kTemperatureGpuCelsius, FieldId::kPowerDrawWatts};
  const auto all = gs::StoredFields(gpuwatch::Scope::kDevice);
  for (const auto* fields : {&four, &all}) {
    std::vector<double> ms;
    std::size_t points = 0;
    for (int i = 0; i < 20; ++i) {
      const auto start = std::chrono::steady_clock::now();
      auto series = reader->DeviceSamples(id, *fields, from, to);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      if (!series) {
        std::printf("24 h query failed: %s\n", series.error().message().c_str());
        return;
      }
      points = series->points.size();
    }
    std::sort(ms.begin(), ms.end());
    std::printf(
        "24 h of GPU 0, %zu field(s), %zu points: median %.2f ms, slowest %.2f ms (20 runs)\n",
        fields->size(), points, ms[ms.size() / 2], ms.back());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: history_size OUT.db [gpus] [procs] [hours] [--narrow]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int gpus = argc > 2 ? std::atoi(argv[2]) : 1;
  const int procs = argc > 3 ? std::atoi(argv[3]) : 2;
  const std::int64_t seconds = (argc > 4 ? std::atoll(argv[4]) : 24) * 3600;
  const bool narrow = argc > 5 && std::strcmp(argv[5], "--narrow") == 0;
  std::filesystem::remove(path);
  {
    gs::HistoryOptions opts;
    opts.queue_capacity = 1 << 20;
    auto w = gs::HistoryWriter::Open(path, opts);
    if (!w) {
      std::fprintf(stderr, "%s\n", w.status().message().c_str());
      return 1;
    }
    std::mt19937 rng(1);
    for (std::int64_t sec = 0; sec < seconds; ++sec) {
      (*w)->Append(Simulate(sec, gpus, procs, rng));
      if (sec % 600 == 599 && !(*w)->Flush().ok()) return 1;
    }
    if (!(*w)->Flush().ok()) return 1;
  }
  {
    auto db = gs::Db::Open(path, gs::Db::Mode::kReadWriteCreate);
    if (!db) return 1;
    for (;;) {
      auto more = gs::Maintain(*db, gs::Retention{});
      if (!more || !*more) break;
    }
    (void)db->Exec("PRAGMA wal_checkpoint(TRUNCATE); VACUUM");
  }
  std::printf("%lld s, %d GPU(s), %d process(es) each: %ju bytes\n",
              static_cast<long long>(seconds), gpus, procs,
              static_cast<std::uintmax_t>(std::filesystem::file_size(path)));
  PrintTables(path);
  TimeDayQuery(path, seconds);
  if (narrow) WriteNarrow(path + ".narrow", gpus, procs, seconds);
  return 0;
}
