#include "store/sqlite.h"

#include <fmt/format.h>

#include "core/text_file.h"

namespace gpuwatch::store {

Status SqliteStatus(int rc, std::string_view what, sqlite3* db) {
  std::string msg = fmt::format("{}: {}", what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return Status::Ok();
    case SQLITE_FULL:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
      return Status::Unavailable(std::move(msg));
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return Status::PermissionDenied(std::move(msg));
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return Status::InvalidArgument(std::move(msg));
    default:
      return Status::Internal(std::move(msg));
  }
}

Result<Db> Db::Open(const std::string& path, Mode mode) {
  // A FIFO would block the first read; a device is no database.
  if (Status s = CheckRegularFileOrAbsent(path); !s.ok()) {
    return Status::InvalidArgument(
        fmt::format("cannot open history database '{}': {}", path, s.message()));
  }
  Db db;
  db.path_ = path;
  sqlite3* raw = nullptr;
  int flags =
      mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  db.db_.reset(raw);  // closed on every path, even when the open failed
  if (rc != SQLITE_OK) {
    return SqliteStatus(rc, fmt::format("cannot open history database '{}'", path), raw);
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, 5000);
  // Touch the file: SQLite opens lazily, so a directory, a non-database or
  // an unreadable file would otherwise fail only at the first query.
  Result<std::int64_t> probe = db.QueryInt("PRAGMA schema_version");
  if (!probe) {
    return probe.error().WithContext(fmt::format("history database '{}'", path));
  }
  return db;
}

Status Db::Exec(std::string_view sql) {
  std::string text(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, &err);
  if (err) sqlite3_free(err);
  if (rc != SQLITE_OK) return SqliteStatus(rc, sql.substr(0, 60), db_.get());
  return Status::Ok();
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    return SqliteStatus(rc, fmt::format("prepare '{}'", sql.substr(0, 60)), db_.get());
  }
  return Stmt(raw);
}

Result<std::int64_t> Db::QueryInt(std::string_view sql) {
  Result<Stmt> stmt = Prepare(sql);
  if (!stmt) return stmt.error();
  Result<bool> row = stmt->Step();
  if (!row) return row.error();
  if (!*row) return Status::NotFound(fmt::format("'{}' returned no row", sql));
  return stmt->Int(0);
}

Result<bool> Stmt::Step() {
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_.get());
  const char* sql = sqlite3_sql(stmt_.get());
  return SqliteStatus(rc, std::string_view(sql ? sql : "").substr(0, 60), db);
}

Status Stmt::Run() {
  Result<bool> r = Step();
  Reset();
  return r.status();
}

std::string Stmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_.get(), col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), col)));
}

Status Transaction::Commit() {
  Status s = db_.Exec("COMMIT");
  if (s.ok()) open_ = false;
  return s;
}

Transaction::~Transaction() {
  // After SQLITE_FULL SQLite may already have rolled back on its own.
  if (open_ && db_.in_transaction()) (void)db_.Exec("ROLLBACK");
}

}  // namespace gpuwatch::store
