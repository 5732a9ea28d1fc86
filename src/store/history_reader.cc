#include "store/history_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "store/batch_writer.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace gpuwatch::store {
namespace {

using std::chrono::milliseconds;

template <typename Enum, typename NameFn>
Enum FromName(std::string_view name, Enum last, NameFn name_of) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (name_of(static_cast<Enum>(i)) == name) return static_cast<Enum>(i);
  }
  return static_cast<Enum>(0);
}

Result<std::optional<std::int64_t>> OldestTs(Db& db, const std::string& table,
                                             std::string_view owner, std::int64_t id) {
  Result<Stmt> q =
      db.Prepare(fmt::format("SELECT min(ts) FROM \"{}\" WHERE {} = ?1", table, owner));
  if (!q) return q.error();
  q->Bind(1, id);
  Result<bool> row = q->Step();
  if (!row) return row.error();
  return *row ? q->OptionalInt(0) : std::nullopt;
}

// Appends the rows of `sql` to `points`: column 0 the time, then per field
// either one value (`single`) or avg, min, max.
Status ReadPoints(Db& db, const std::string& sql, std::int64_t owner, std::int64_t from,
                  std::int64_t to, std::size_t nfields, bool single,
                  std::vector<SeriesPoint>& points) {
  Result<Stmt> q = db.Prepare(sql);
  if (!q) return q.error();
  q->Bind(1, owner);
  q->Bind(2, from);
  q->Bind(3, to);
  for (;;) {
    Result<bool> row = q->Step();
    if (!row) return row.error();
    if (!*row) return Status::Ok();
    SeriesPoint p;
    p.time = FromMillis(q->Int(0));
    p.values.resize(nfields);
    for (std::size_t i = 0; i < nfields; ++i) {
      if (single) {
        std::optional<double> v = q->OptionalDouble(static_cast<int>(1 + i));
        p.values[i] = Aggregate{v, v, v};
      } else {
        const int c = static_cast<int>(1 + 3 * i);
        p.values[i] =
            Aggregate{q->OptionalDouble(c), q->OptionalDouble(c + 1), q->OptionalDouble(c + 2)};
      }
    }
    points.push_back(std::move(p));
  }
}

// Raw rows, one per sample (step 0) or grouped into `step` buckets.
std::string RawSql(const Family& f, std::span<const FieldId> fields, std::int64_t step) {
  std::string cols;
  for (FieldId id : fields) {
    std::string_view k = Info(id).key;
    cols += step > 0 ? fmt::format(", avg(\"{0}\"), min(\"{0}\"), max(\"{0}\")", k)
                     : fmt::format(", \"{}\"", k);
  }
  if (step <= 0) {
    return fmt::format("SELECT ts{} FROM \"{}\" WHERE {} = ?1 AND ts >= ?2 AND ts < ?3 ORDER BY ts",
                       cols, TableName(f, Tier::kRaw), f.owner);
  }
  return fmt::format(
      "SELECT (ts / {0}) * {0} AS b{1} FROM \"{2}\" WHERE {3} = ?1 AND ts >= ?2 AND ts < ?3 "
      "GROUP BY b ORDER BY b",
      step, cols, TableName(f, Tier::kRaw), f.owner);
}

// Aggregate rows as stored (step == bucket) or merged into wider buckets;
// the average is weighted by each row's sample count.
std::string TierSql(const Family& f, Tier t, std::span<const FieldId> fields, std::int64_t step) {
  const bool as_is = step == TierBucket(t).count();
  std::string cols;
  for (FieldId id : fields) {
    std::string_view k = Info(id).key;
    cols += as_is ? fmt::format(", \"{0}_avg\", \"{0}_min\", \"{0}_max\"", k)
                  : fmt::format(
                        ", sum(\"{0}_avg\" * n) / sum(iif(\"{0}_avg\" IS NULL, 0, n)), "
                        "min(\"{0}_min\"), max(\"{0}_max\")",
                        k);
  }
  if (as_is) {
    return fmt::format("SELECT ts{} FROM \"{}\" WHERE {} = ?1 AND ts >= ?2 AND ts < ?3 ORDER BY ts",
                       cols, TableName(f, t), f.owner);
  }
  return fmt::format(
      "SELECT (ts / {0}) * {0} AS b{1} FROM \"{2}\" WHERE {3} = ?1 AND ts >= ?2 AND ts < ?3 "
      "GROUP BY b ORDER BY b",
      step, cols, TableName(f, t), f.owner);
}

}  // namespace

Result<HistoryReader> HistoryReader::Open(const std::string& path) {
  Result<Db> db = Db::Open(path, Db::Mode::kReadOnly);
  if (!db) return db.error();
  auto owned = std::make_unique<Db>(std::move(*db));
  if (Status s = CheckReadable(*owned); !s.ok()) return s;
  return HistoryReader(std::move(owned));
}

HistoryReader::HistoryReader(std::unique_ptr<Db> db) : db_(std::move(db)) {}

Result<bool> HistoryReader::Demo() {
  Result<std::int64_t> demo = GetMeta(*db_, kDemoMetaKey, 0);
  if (!demo) return demo.error();
  return *demo != 0;
}
HistoryReader::HistoryReader(HistoryReader&&) noexcept = default;
HistoryReader& HistoryReader::operator=(HistoryReader&&) noexcept = default;
HistoryReader::~HistoryReader() = default;

Tier HistoryReader::ChooseTier(TimePoint from, TimePoint to) {
  // Compared as from >= to - span: `to - from` overflows for open ranges
  // (TimePoint::min() .. now).
  if (from >= to - std::chrono::hours(6)) return Tier::kRaw;
  if (from >= to - std::chrono::hours(24 * 7)) return Tier::kMinute;
  return Tier::kHour;
}

Result<std::vector<DeviceRecord>> HistoryReader::Devices() {
  Result<Stmt> q = db_->Prepare(
      "SELECT id, uuid, idx, mig_index, name, memory_total_bytes, first_seen, last_seen "
      "FROM devices ORDER BY idx, coalesce(mig_index, -1), id");
  if (!q) return q.error();
  std::vector<DeviceRecord> out;
  for (;;) {
    Result<bool> row = q->Step();
    if (!row) return row.error();
    if (!*row) break;
    DeviceRecord d;
    d.id = q->Int(0);
    d.uuid = q->Text(1);
    const std::int64_t index = q->Int(2);
    const std::optional<std::int64_t> mig = q->OptionalInt(3);
    for (auto [column, value] :
         {std::pair{"idx", std::optional(index)}, std::pair{"mig_index", mig}}) {
      if (value && (*value < 0 || *value > kMaxDeviceIndex)) {
        return Status::InvalidArgument(
            fmt::format("table devices: {} {} (row id {}) is outside 0..{}: a damaged history?",
                        column, *value, d.id, kMaxDeviceIndex));
      }
    }
    d.index = static_cast<int>(index);
    if (mig) d.mig_index = static_cast<int>(*mig);
    d.name = q->Text(4);
    d.memory_total_bytes = q->OptionalDouble(5);
    d.first_seen = FromMillis(q->Int(6));
    d.last_seen = FromMillis(q->Int(7));
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<ProcessRecord>> HistoryReader::Processes(TimePoint from, TimePoint to) {
  Result<Stmt> q = db_->Prepare(
      "SELECT id, device_id, pid, start_ticks, start_time, name, command, user, container_id, "
      "container_runtime, pod_uid, slurm_job_id, gpu_instance_id, first_seen, last_seen "
      "FROM processes WHERE last_seen >= ?1 AND first_seen < ?2 ORDER BY first_seen, id");
  if (!q) return q.error();
  q->Bind(1, ToMillis(from));
  q->Bind(2, ToMillis(to));
  std::vector<ProcessRecord> out;
  for (;;) {
    Result<bool> row = q->Step();
    if (!row) return row.error();
    if (!*row) break;
    ProcessRecord p;
    p.id = q->Int(0);
    p.device_id = q->Int(1);
    p.key.pid = static_cast<std::uint32_t>(q->Int(2));
    p.key.start_ticks = static_cast<std::uint64_t>(q->Int(3));
    if (auto t = q->OptionalInt(4)) p.start_time = FromMillis(*t);
    p.name = q->Text(5);
    p.command = q->Text(6);
    p.user = q->Text(7);
    p.container_id = q->Text(8);
    p.container_runtime = q->Text(9);
    p.pod_uid = q->Text(10);
    p.slurm_job_id = q->Text(11);
    if (auto g = q->OptionalInt(12)) p.gpu_instance_id = static_cast<std::uint32_t>(*g);
    p.first_seen = FromMillis(q->Int(13));
    p.last_seen = FromMillis(q->Int(14));
    out.push_back(std::move(p));
  }
  return out;
}

Result<Series> HistoryReader::DeviceSamples(std::int64_t device_id, std::span<const FieldId> fields,
                                            TimePoint from, TimePoint to, milliseconds step,
                                            std::optional<Tier> tier) {
  return Samples(kDeviceFamily, device_id, fields, from, to, step, tier);
}

Result<Series> HistoryReader::ProcessSamples(std::int64_t process_id,
                                             std::span<const FieldId> fields, TimePoint from,
                                             TimePoint to, milliseconds step,
                                             std::optional<Tier> tier) {
  return Samples(kProcessFamily, process_id, fields, from, to, step, tier);
}

Result<Series> HistoryReader::Samples(const Family& f, std::int64_t owner,
                                      std::span<const FieldId> fields, TimePoint from, TimePoint to,
                                      milliseconds step, std::optional<Tier> tier) {
  const std::vector<FieldId> stored = StoredFields(f.scope);
  for (FieldId id : fields) {
    if (std::find(stored.begin(), stored.end(), id) == stored.end()) {
      return Status::InvalidArgument(
          fmt::format("field '{}' is not kept in the {} history", Info(id).key, f.name));
    }
  }
  const std::int64_t lo = ToMillis(from);
  const std::int64_t hi = ToMillis(to);

  Tier t = tier.value_or(ChooseTier(from, to));
  if (!tier) {
    // Retention: move to a coarser tier while the finer one starts after
    // `from` and the coarser one reaches further back.
    while (t != Tier::kHour) {
      const Tier coarser = static_cast<Tier>(static_cast<int>(t) + 1);
      auto here = OldestTs(*db_, TableName(f, t), f.owner, owner);
      auto there = OldestTs(*db_, TableName(f, coarser), f.owner, owner);
      if (!here) return here.error();
      if (!there) return there.error();
      const bool here_covers = here->has_value() && **here <= lo;
      const bool there_older = there->has_value() && (!here->has_value() || **there < **here);
      if (here_covers || !there_older) break;
      t = coarser;
    }
  }

  Series series;
  series.tier = t;
  series.fields.assign(fields.begin(), fields.end());
  if (t == Tier::kRaw) {
    Status s = ReadPoints(*db_, RawSql(f, fields, step.count()), owner, lo, hi, fields.size(),
                          step.count() <= 0, series.points);
    if (!s.ok()) return s;
    return series;
  }
  // Aggregates up to the tier's watermark, raw rows (grouped the same way)
  // after it: the newest buckets are not rolled up yet.
  const std::int64_t bucket = std::max(step.count(), TierBucket(t).count());
  Result<std::int64_t> until = GetMeta(*db_, fmt::format("rollup.{}.until", TableName(f, t)), 0);
  if (!until) return until.error();
  const std::int64_t split = (*until / bucket) * bucket;
  if (lo < split) {
    Status s = ReadPoints(*db_, TierSql(f, t, fields, bucket), owner, lo, std::min(hi, split),
                          fields.size(), false, series.points);
    if (!s.ok()) return s;
  }
  if (hi > split) {
    Status s = ReadPoints(*db_, RawSql(f, fields, bucket), owner, std::max(lo, split), hi,
                          fields.size(), false, series.points);
    if (!s.ok()) return s;
  }
  return series;
}

Result<std::vector<Event>> HistoryReader::Events(TimePoint from, TimePoint to) {
  Result<Stmt> q = db_->Prepare(
      "SELECT ts, kind, severity, source, gpu, pid, start_ticks, value, message FROM events "
      "WHERE ts >= ?1 AND ts < ?2 ORDER BY ts, id");
  if (!q) return q.error();
  q->Bind(1, ToMillis(from));
  q->Bind(2, ToMillis(to));
  std::vector<Event> out;
  for (;;) {
    Result<bool> row = q->Step();
    if (!row) return row.error();
    if (!*row) break;
    Event e;
    e.time = FromMillis(q->Int(0));
    e.kind = FromName(q->Text(1), Event::Kind::kMark, EventKindName);
    e.severity = FromName(q->Text(2), Severity::kCritical, SeverityName);
    e.source = q->Text(3);
    if (auto g = q->OptionalInt(4)) e.gpu = static_cast<int>(*g);
    if (auto pid = q->OptionalInt(5)) {
      e.process = ProcessKey{static_cast<std::uint32_t>(*pid),
                             static_cast<std::uint64_t>(q->OptionalInt(6).value_or(0))};
    }
    e.value = q->OptionalDouble(7);
    e.message = q->Text(8);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<Mark>> HistoryReader::Marks(TimePoint from, TimePoint to) {
  Result<Stmt> q = db_->Prepare(
      "SELECT ts, kind, value, label, pid, start_ticks FROM marks WHERE ts >= ?1 AND ts < ?2 "
      "ORDER BY ts, id");
  if (!q) return q.error();
  q->Bind(1, ToMillis(from));
  q->Bind(2, ToMillis(to));
  std::vector<Mark> out;
  for (;;) {
    Result<bool> row = q->Step();
    if (!row) return row.error();
    if (!*row) break;
    Mark m;
    m.time = FromMillis(q->Int(0));
    m.kind = FromName(q->Text(1), Mark::Kind::kPhase, MarkKindName);
    m.value = q->OptionalDouble(2);
    m.label = q->Text(3);
    if (auto pid = q->OptionalInt(4)) {
      m.process = ProcessKey{static_cast<std::uint32_t>(*pid),
                             static_cast<std::uint64_t>(q->OptionalInt(5).value_or(0))};
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace gpuwatch::store
