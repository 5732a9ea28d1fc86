// The history database's schema: what the tables are, how the sample
// columns follow the field catalogue, and the migrations that bring an older
// file up to date (PRAGMA user_version). docs/history.md describes it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuwatch/fields.h"
#include "gpuwatch/status.h"
#include "store/history_types.h"
#include "store/sqlite.h"

namespace gpuwatch::store {

inline constexpr int kSchemaVersion = 1;
inline constexpr int kApplicationId = 0x67707774;  // "gpwt"

// Samples come in two families that share one shape: per device and per
// process. Each has a raw, a per-minute and a per-hour table.
struct Family {
  std::string_view name;   // "device", "process": table prefix
  std::string_view owner;  // "device_id", "process_id"
  Scope scope;
};
inline constexpr Family kDeviceFamily{"device", "device_id", Scope::kDevice};
inline constexpr Family kProcessFamily{"process", "process_id", Scope::kProcess};
inline constexpr Family kFamilies[] = {kDeviceFamily, kProcessFamily};

// "device_raw", "process_minute", ...
std::string TableName(const Family& f, Tier t);
std::chrono::milliseconds TierBucket(Tier t);  // 0 for raw, 1 min, 1 h

// The fields that get a column: numeric (not text), changing (not static)
// fields of the family's scope, in catalogue order. A column is named by
// the field's stable catalogue key; aggregates add _avg, _min and _max.
std::vector<FieldId> StoredFields(Scope scope);

// Sets the connection up (WAL, synchronous=NORMAL, foreign keys) and creates
// or migrates the schema; adds a column for every catalogue field that has
// none yet. Fails on a file that is not a gpuwatch history or that a newer
// gpuwatch wrote.
Status PrepareForWriting(Db& db);
// Checks a file opened read-only: right application, a schema we can read.
Status CheckReadable(Db& db);

// Set (to 1) in the meta table once a simulated (demo) snapshot is written.
inline constexpr std::string_view kDemoMetaKey = "demo";

// Watermarks and other small state in the meta table.
Result<std::int64_t> GetMeta(Db& db, std::string_view key, std::int64_t fallback);
Status SetMeta(Db& db, std::string_view key, std::int64_t value);

}  // namespace gpuwatch::store
