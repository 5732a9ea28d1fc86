// Helpers for the history tests: hand-made snapshots with fixed timestamps
// and a scratch directory.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "gpuwatch/snapshot.h"
#include "store/history_types.h"

namespace gpuwatch::store::testing {

// 2024-01-01T00:00:00Z: an hour (and minute) boundary.
inline constexpr std::int64_t kT0Ms = 1704067200000;

inline TimePoint At(std::int64_t ms_after_t0) {
  return TimePoint(std::chrono::milliseconds(kT0Ms + ms_after_t0));
}

class ScratchDir {
 public:
  ScratchDir() {
    static int n = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("gpuwatch-store-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline DeviceSample MakeDevice(int index, double memory_used_bytes) {
  DeviceSample d;
  d.index = index;
  d.fields[FieldId::kIndex] = Reading::Number(index);
  d.fields[FieldId::kUuid] = Reading::Text("GPU-0000000" + std::to_string(index));
  d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(150754820096.0);
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(memory_used_bytes);
  d.fields[FieldId::kFanSpeedRatio] = Reading::Absent(Missing::kNotSupported);
  return d;
}

inline ProcessSample MakeProcess(std::uint32_t pid, double used_bytes) {
  ProcessSample p;
  p.pid = pid;
  p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(used_bytes);
  p.host.visibility = HostProcess::Visibility::kVisible;
  p.host.name = "python";
  p.host.command = "python train.py --lr 0.1";
  p.host.user = "alice";
  p.host.uid = 1000;
  p.host.start_ticks = 1000 + pid;
  p.host.container_id = "0123456789ab";
  p.host.container_runtime = "docker";
  p.host.slurm_job_id = "4242";
  return p;
}

// One device whose memory_used_bytes is `value` at t0 + ms.
inline std::shared_ptr<const Snapshot> OneDevice(std::int64_t ms, double value) {
  auto s = std::make_shared<Snapshot>();
  s->time = At(ms);
  s->devices.push_back(MakeDevice(0, value));
  return s;
}

// The first column of the first row of `sql` as text ("" when none).
inline std::string QueryText(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    } else {
      out = std::string("error: ") + sqlite3_errmsg(db);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

inline std::int64_t QueryNumber(const std::string& path, const std::string& sql) {
  return std::stoll(QueryText(path, sql));
}

}  // namespace gpuwatch::store::testing
