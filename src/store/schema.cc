#include "store/schema.h"

#include <fmt/format.h>

#include <set>

namespace gpuwatch::store {
namespace {

constexpr std::string_view kFixedTables = R"sql(
CREATE TABLE IF NOT EXISTS meta(
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS devices(
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  idx INTEGER NOT NULL,
  mig_index INTEGER,
  name TEXT,
  memory_total_bytes REAL,
  first_seen INTEGER NOT NULL,
  last_seen INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS processes(
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  pid INTEGER NOT NULL,
  start_ticks INTEGER NOT NULL,
  start_time INTEGER,
  name TEXT,
  command TEXT,
  user TEXT,
  container_id TEXT,
  container_runtime TEXT,
  pod_uid TEXT,
  slurm_job_id TEXT,
  gpu_instance_id INTEGER,
  first_seen INTEGER NOT NULL,
  last_seen INTEGER NOT NULL,
  UNIQUE(device_id, pid, start_ticks)
);
CREATE INDEX IF NOT EXISTS processes_last_seen ON processes(last_seen);
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  kind TEXT NOT NULL,
  severity TEXT NOT NULL,
  source TEXT NOT NULL,
  gpu INTEGER,
  pid INTEGER,
  start_ticks INTEGER,
  value REAL,
  message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_ts ON events(ts);
CREATE TABLE IF NOT EXISTS marks(
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  kind TEXT NOT NULL,
  value REAL,
  label TEXT NOT NULL,
  pid INTEGER,
  start_ticks INTEGER
);
CREATE INDEX IF NOT EXISTS marks_ts ON marks(ts);
)sql";

std::vector<std::string> ColumnsFor(const Family& f, Tier t) {
  std::vector<std::string> cols;
  for (FieldId id : StoredFields(f.scope)) {
    std::string_view key = Info(id).key;
    if (t == Tier::kRaw) {
      cols.emplace_back(key);
    } else {
      cols.push_back(fmt::format("{}_avg", key));
      cols.push_back(fmt::format("{}_min", key));
      cols.push_back(fmt::format("{}_max", key));
    }
  }
  return cols;
}

// Creates the table with every column, or adds the columns an older
// catalogue did not have. Rows keyed by (ts, owner) and stored in that order
// (WITHOUT ROWID): appends go to the end of the b-tree, pages stay full.
Status EnsureSampleTable(Db& db, const Family& f, Tier t) {
  const std::string table = TableName(f, t);
  const std::vector<std::string> cols = ColumnsFor(f, t);
  std::set<std::string> have;
  {
    Result<Stmt> info = db.Prepare(fmt::format("PRAGMA table_info(\"{}\")", table));
    if (!info) return info.error();
    for (;;) {
      Result<bool> row = info->Step();
      if (!row) return row.error();
      if (!*row) break;
      have.insert(info->Text(1));
    }
  }
  if (have.empty()) {
    std::string sql =
        fmt::format("CREATE TABLE \"{}\"(ts INTEGER NOT NULL, {} INTEGER NOT NULL", table, f.owner);
    if (t != Tier::kRaw) sql += ", n INTEGER NOT NULL";
    for (const std::string& c : cols) sql += fmt::format(", \"{}\" REAL", c);
    sql += fmt::format(", PRIMARY KEY(ts, {})) WITHOUT ROWID", f.owner);
    return db.Exec(sql);
  }
  for (const std::string& c : cols) {
    if (have.count(c)) continue;
    Status s = db.Exec(fmt::format("ALTER TABLE \"{}\" ADD COLUMN \"{}\" REAL", table, c));
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status CheckIdentity(Db& db) {
  Result<std::int64_t> app = db.QueryInt("PRAGMA application_id");
  if (!app) return app.error();
  Result<std::int64_t> tables = db.QueryInt("SELECT count(*) FROM sqlite_schema");
  if (!tables) return tables.error();
  if (*app != kApplicationId && *tables > 0) {
    return Status::InvalidArgument("not a gpuwatch history database (another application's file)");
  }
  Result<std::int64_t> version = db.QueryInt("PRAGMA user_version");
  if (!version) return version.error();
  if (*version > kSchemaVersion) {
    return Status::InvalidArgument(
        fmt::format("history schema version {} is newer than this gpuwatch reads ({}); upgrade "
                    "gpuwatch or use another --db",
                    *version, kSchemaVersion));
  }
  return Status::Ok();
}

}  // namespace

std::string TableName(const Family& f, Tier t) { return fmt::format("{}_{}", f.name, TierName(t)); }

std::chrono::milliseconds TierBucket(Tier t) {
  switch (t) {
    case Tier::kRaw:
      return std::chrono::milliseconds(0);
    case Tier::kMinute:
      return std::chrono::minutes(1);
    case Tier::kHour:
      return std::chrono::hours(1);
  }
  return std::chrono::milliseconds(0);
}

std::vector<FieldId> StoredFields(Scope scope) {
  std::vector<FieldId> out;
  for (const FieldInfo& f : Catalogue()) {
    if (f.scope == scope && f.unit != Unit::kText && f.cadence != Cadence::kStatic) {
      out.push_back(f.id);
    }
  }
  return out;
}

Status PrepareForWriting(Db& db) {
  const std::string where = fmt::format("history database '{}'", db.path());
  // journal_mode answers with a row; QueryInt would read "wal" as 0.
  Result<Stmt> wal = db.Prepare("PRAGMA journal_mode=WAL");
  if (!wal) return wal.error().WithContext(where);
  if (Result<bool> r = wal->Step(); !r) return r.error().WithContext(where);
  if (wal->Text(0) != "wal") {
    return Status::Unavailable(
        fmt::format("{}: cannot use WAL mode (journal_mode is {})", where, wal->Text(0)));
  }
  wal = Stmt();
  Status s = db.Exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON");
  if (!s.ok()) return s.WithContext(where);
  if (s = CheckIdentity(db); !s.ok()) return s.WithContext(where);

  Transaction tx(db);
  if (s = tx.Begin(); !s.ok()) return s.WithContext(where);
  if (s = db.Exec(kFixedTables); !s.ok()) return s.WithContext(where);
  for (const Family& f : kFamilies) {
    for (Tier t : {Tier::kRaw, Tier::kMinute, Tier::kHour}) {
      if (s = EnsureSampleTable(db, f, t); !s.ok()) return s.WithContext(where);
    }
  }
  // Migrations from older versions go here, one step per version.
  s = db.Exec(fmt::format("PRAGMA application_id={}; PRAGMA user_version={}", kApplicationId,
                          kSchemaVersion));
  if (!s.ok()) return s.WithContext(where);
  return tx.Commit().WithContext(where);
}

Status CheckReadable(Db& db) {
  Status s = CheckIdentity(db);
  if (!s.ok()) return s.WithContext(fmt::format("history database '{}'", db.path()));
  Result<std::int64_t> version = db.QueryInt("PRAGMA user_version");
  if (!version) return version.error();
  if (*version == 0) {
    return Status::NotFound(fmt::format("history database '{}' is empty", db.path()));
  }
  return Status::Ok();
}

Result<std::int64_t> GetMeta(Db& db, std::string_view key, std::int64_t fallback) {
  Result<Stmt> q = db.Prepare("SELECT value FROM meta WHERE key = ?1");
  if (!q) return q.error();
  q->Bind(1, key);
  Result<bool> row = q->Step();
  if (!row) return row.error();
  return *row ? q->Int(0) : fallback;
}

Status SetMeta(Db& db, std::string_view key, std::int64_t value) {
  Result<Stmt> q = db.Prepare(
      "INSERT INTO meta(key, value) VALUES(?1, ?2) "
      "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  if (!q) return q.error();
  q->Bind(1, key);
  q->Bind(2, value);
  return q->Run();
}

}  // namespace gpuwatch::store
