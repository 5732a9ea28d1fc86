// HistoryReader: what the report, the JSON API and replay read back from a
// history database. Opens the file read-only; safe to use while a
// HistoryWriter (in this or another process) is writing it. One thread at a
// time per reader.
//
// Time ranges are half-open: [from, to).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpuwatch/event.h"
#include "gpuwatch/fields.h"
#include "gpuwatch/status.h"
#include "store/history_types.h"

namespace gpuwatch::store {

class Db;
struct Family;

// The GPU (and MIG) indices a history may hold: NVML numbers GPUs from 0
// and no machine has 64. Devices() refuses a row outside 0..kMaxDeviceIndex
// rather than have its readers size anything by it.
inline constexpr int kMaxDeviceIndex = 63;

class HistoryReader {
 public:
  static Result<HistoryReader> Open(const std::string& path);
  HistoryReader(HistoryReader&&) noexcept;
  HistoryReader& operator=(HistoryReader&&) noexcept;
  ~HistoryReader();

  // Every device ever recorded, by index then MIG index. InvalidArgument
  // naming the table, the row and the value when an index is outside
  // 0..kMaxDeviceIndex (a damaged or forged file).
  Result<std::vector<DeviceRecord>> Devices();
  // Processes seen at some time within [from, to), by first seen.
  Result<std::vector<ProcessRecord>> Processes(TimePoint from, TimePoint to);

  // Samples of `fields` (device fields, see StoredFields) for one device.
  // `step` 0 at the raw tier gives every sample; otherwise points are
  // buckets of max(step, the tier's bucket) with avg/min/max. Without
  // `tier`, ChooseTier() picks one, and a coarser tier is used where the
  // finer one no longer holds the start of the range (retention). The
  // newest minutes and hours, not rolled up yet, are read from raw rows.
  Result<Series> DeviceSamples(std::int64_t device_id, std::span<const FieldId> fields,
                               TimePoint from, TimePoint to,
                               std::chrono::milliseconds step = std::chrono::milliseconds(0),
                               std::optional<Tier> tier = std::nullopt);
  // The same for one process (ProcessRecord::id) and process fields.
  Result<Series> ProcessSamples(std::int64_t process_id, std::span<const FieldId> fields,
                                TimePoint from, TimePoint to,
                                std::chrono::milliseconds step = std::chrono::milliseconds(0),
                                std::optional<Tier> tier = std::nullopt);

  Result<std::vector<Event>> Events(TimePoint from, TimePoint to);
  // True when simulated (demo) samples were written to this history.
  Result<bool> Demo();
  Result<std::vector<Mark>> Marks(TimePoint from, TimePoint to);

  // Raw for ranges up to 6 hours, per-minute up to 7 days, per-hour beyond.
  static Tier ChooseTier(TimePoint from, TimePoint to);

 private:
  explicit HistoryReader(std::unique_ptr<Db> db);
  Result<Series> Samples(const Family& family, std::int64_t owner, std::span<const FieldId> fields,
                         TimePoint from, TimePoint to, std::chrono::milliseconds step,
                         std::optional<Tier> tier);
  std::unique_ptr<Db> db_;
};

}  // namespace gpuwatch::store
