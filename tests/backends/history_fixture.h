// What the history replay tests share: a directory of a test's own with
// writers, replays and raw SQL on its files, and a two-GPU sample with a
// trainer that every test writes through the real store::HistoryWriter.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "../store/store_test_util.h"
#include "../test_dir.h"
#include "backends/replay/replay_backend.h"
#include "gpuwatch/snapshot.h"
#include "store/history_writer.h"

namespace gpuwatch::history_test {

namespace fs = std::filesystem;
using replay::ReplayBackend;
using std::chrono::milliseconds;
using std::chrono::seconds;
using TimePoint = std::chrono::system_clock::time_point;

// 2024-01-01T00:00:00Z, an hour boundary; the store keeps milliseconds.
inline const TimePoint kHistoryT0{milliseconds(1704067200000)};

class ReplayDir : public testing::TestDir {
 protected:
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
};

// store_test_util.h's device and process, with what the replay tests check
// beside them: a utilization, a pod, a start time.
inline DeviceSample Gpu(int index, double used_bytes) {
  DeviceSample d = store::testing::MakeDevice(index, used_bytes);
  d.fields[FieldId::kUuid] = Reading::Text("GPU-" + std::to_string(index) + "aaa");
  d.fields[FieldId::kUtilizationGpuRatio] = Reading::Number(0.25 * index);
  return d;
}

inline ProcessSample Trainer(double used_bytes) {
  ProcessSample p = store::testing::MakeProcess(4242, used_bytes);  // started at tick 5242
  p.host.start_time = kHistoryT0 - seconds(30);
  p.host.pod_uid = "pod-1";
  return p;
}

// Sample n: two GPUs at t0 + n s; GPU 0 runs the trainer, GPU 1 a process
// that could not be attributed.
inline std::shared_ptr<const Snapshot> HistorySample(int n) {
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

inline void WriteSamples(store::HistoryWriter& w, int from, int to) {
  for (int i = from; i < to; ++i) w.Append(HistorySample(i));
  ASSERT_TRUE(w.Flush().ok());
}

}  // namespace gpuwatch::history_test
