// Tier rollup (raw -> per-minute and per-hour avg/min/max) and retention
// deletes. Both run on the writer thread after each batch and do a bounded
// amount of work per call, so a backlog (a writer that was stopped for a
// day) is worked off over several batches instead of stalling one.
//
// Time is the data's own time: "now" is the newest sample in the file, so
// writing an old recording does not delete it as it goes in.
#pragma once

#include "gpuwatch/status.h"
#include "store/history_types.h"
#include "store/sqlite.h"

namespace gpuwatch::store {

struct MaintenanceLimits {
  int minute_buckets_per_call = 60;  // an hour of raw rows
  int hour_buckets_per_call = 2;
  std::chrono::milliseconds raw_delete_span = std::chrono::hours(1);
  std::chrono::milliseconds minute_delete_span = std::chrono::hours(24);
  std::chrono::milliseconds hour_delete_span = std::chrono::hours(24 * 30);
};

// Rolls up every complete bucket (one that ends at or before the bucket of
// the newest raw sample) not rolled up yet, at most the limits' worth, then
// deletes what retention says is old. Raw rows are deleted only once both
// aggregate tiers cover them. One transaction; returns true when work is
// left for the next call.
Result<bool> Maintain(Db& db, const Retention& retention, const MaintenanceLimits& limits = {});

}  // namespace gpuwatch::store
