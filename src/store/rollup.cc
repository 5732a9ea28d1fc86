#include "store/rollup.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "store/schema.h"

namespace gpuwatch::store {
namespace {

std::string WatermarkKey(const Family& f, Tier t) {
  return fmt::format("rollup.{}.until", TableName(f, t));
}

Result<std::optional<std::int64_t>> QueryOptionalInt(Db& db, const std::string& sql) {
  Result<Stmt> q = db.Prepare(sql);
  if (!q) return q.error();
  Result<bool> row = q->Step();
  if (!row) return row.error();
  if (!*row) return std::optional<std::int64_t>();
  return q->OptionalInt(0);
}

// Rolls raw rows into tier `t` from its watermark on. Returns true when
// complete buckets are left for the next call.
Result<bool> Rollup(Db& db, const Family& f, Tier t, int max_buckets) {
  const std::int64_t size = TierBucket(t).count();
  const std::string raw = TableName(f, Tier::kRaw);
  Result<std::int64_t> until = GetMeta(db, WatermarkKey(f, t), 0);
  if (!until) return until.error();
  auto newest = QueryOptionalInt(db, fmt::format("SELECT max(ts) FROM \"{}\"", raw));
  if (!newest) return newest.error();
  if (!newest->has_value()) return false;
  const std::int64_t complete_end = (**newest / size) * size;
  // Skip gaps in one go: start at the first raw row past the watermark.
  auto first =
      QueryOptionalInt(db, fmt::format("SELECT min(ts) FROM \"{}\" WHERE ts >= {}", raw, *until));
  if (!first) return first.error();
  if (!first->has_value()) return false;
  const std::int64_t start = (**first / size) * size;
  if (start >= complete_end) return false;
  const std::int64_t end = std::min(complete_end, start + size * max_buckets);

  std::string cols = fmt::format("ts, {}, n", f.owner);
  std::string exprs = fmt::format("(ts / {0}) * {0}, {1}, count(*)", size, f.owner);
  for (FieldId id : StoredFields(f.scope)) {
    std::string_view k = Info(id).key;
    cols += fmt::format(", \"{0}_avg\", \"{0}_min\", \"{0}_max\"", k);
    exprs += fmt::format(", avg(\"{0}\"), min(\"{0}\"), max(\"{0}\")", k);
  }
  Status s = db.Exec(fmt::format(
      "INSERT OR REPLACE INTO \"{}\"({}) SELECT {} FROM \"{}\" WHERE ts >= {} AND ts < {} "
      "GROUP BY 1, 2",
      TableName(f, t), cols, exprs, raw, start, end));
  if (!s.ok()) return s;
  if (s = SetMeta(db, WatermarkKey(f, t), end); !s.ok()) return s;
  return end < complete_end;
}

// Deletes rows older than `cutoff`, at most `span` of them (by time) from the
// oldest. Returns true when old rows are left.
Result<bool> DeleteBefore(Db& db, const std::string& table, std::int64_t cutoff,
                          std::int64_t span) {
  auto oldest = QueryOptionalInt(db, fmt::format("SELECT min(ts) FROM \"{}\"", table));
  if (!oldest) return oldest.error();
  if (!oldest->has_value() || **oldest >= cutoff) return false;
  const std::int64_t upto = std::min(cutoff, **oldest + span);
  Status s = db.Exec(fmt::format("DELETE FROM \"{}\" WHERE ts < {}", table, upto));
  if (!s.ok()) return s;
  return upto < cutoff;
}

Result<std::optional<std::int64_t>> Newest(Db& db) {
  std::optional<std::int64_t> now;
  for (std::string table :
       {TableName(kDeviceFamily, Tier::kRaw), TableName(kProcessFamily, Tier::kRaw),
        std::string("events"), std::string("marks")}) {
    auto t = QueryOptionalInt(db, fmt::format("SELECT max(ts) FROM \"{}\"", table));
    if (!t) return t.error();
    if (t->has_value()) now = std::max(now.value_or(**t), **t);
  }
  return now;
}

}  // namespace

Result<bool> Maintain(Db& db, const Retention& retention, const MaintenanceLimits& limits) {
  using std::chrono::milliseconds;
  Transaction tx(db);
  if (Status s = tx.Begin(); !s.ok()) return s;
  bool more = false;
  for (const Family& f : kFamilies) {
    for (auto [tier, buckets] : {std::pair{Tier::kMinute, limits.minute_buckets_per_call},
                                 std::pair{Tier::kHour, limits.hour_buckets_per_call}}) {
      Result<bool> r = Rollup(db, f, tier, buckets);
      if (!r) return r.error();
      more = more || *r;
    }
  }

  auto now = Newest(db);
  if (!now) return now.error();
  if (now->has_value()) {
    const std::int64_t t = **now;
    auto ms = [](std::chrono::seconds s) { return std::chrono::duration_cast<milliseconds>(s); };
    for (const Family& f : kFamilies) {
      Result<std::int64_t> minute_until = GetMeta(db, WatermarkKey(f, Tier::kMinute), 0);
      Result<std::int64_t> hour_until = GetMeta(db, WatermarkKey(f, Tier::kHour), 0);
      if (!minute_until) return minute_until.error();
      if (!hour_until) return hour_until.error();
      const std::int64_t raw_cutoff =
          std::min({t - ms(retention.raw).count(), *minute_until, *hour_until});
      struct Job {
        Tier tier;
        std::int64_t cutoff;
        milliseconds span;
      };
      for (const Job& job :
           {Job{Tier::kRaw, raw_cutoff, limits.raw_delete_span},
            Job{Tier::kMinute, t - ms(retention.minute).count(), limits.minute_delete_span},
            Job{Tier::kHour, t - ms(retention.hour).count(), limits.hour_delete_span}}) {
        Result<bool> r = DeleteBefore(db, TableName(f, job.tier), job.cutoff, job.span.count());
        if (!r) return r.error();
        more = more || *r;
      }
    }
    // Events, marks and processes live as long as the hour tier.
    const std::int64_t keep_from = t - ms(retention.hour).count();
    Status s =
        db.Exec(fmt::format("DELETE FROM events WHERE ts < {0}; DELETE FROM marks WHERE ts < {0}; "
                            "DELETE FROM processes WHERE last_seen < {0}",
                            keep_from));
    if (!s.ok()) return s;
  }
  if (Status s = tx.Commit(); !s.ok()) return s;
  return more;
}

}  // namespace gpuwatch::store
