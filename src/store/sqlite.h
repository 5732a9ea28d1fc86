// Small RAII wrappers over the SQLite C API: a connection (Db) and a prepared
// statement (Stmt). Errors come back as Status values carrying SQLite's own
// words. A Db and its Stmts belong to one thread at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "gpuwatch/status.h"

namespace gpuwatch::store {

class Stmt;

class Db {
 public:
  enum class Mode { kReadWriteCreate, kReadOnly };
  // Opens `path`. Opening is lazy in SQLite; Open() reads the schema once so
  // that an unreadable or non-database file fails here, naming the path.
  static Result<Db> Open(const std::string& path, Mode mode);

  Db() = default;
  sqlite3* get() const { return db_.get(); }
  const std::string& path() const { return path_; }

  // Runs one or more statements that return no rows.
  Status Exec(std::string_view sql);
  Result<Stmt> Prepare(std::string_view sql);
  // The single integer a query such as "PRAGMA user_version" returns.
  Result<std::int64_t> QueryInt(std::string_view sql);
  bool in_transaction() const { return db_ && sqlite3_get_autocommit(db_.get()) == 0; }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(sqlite3_stmt* stmt) : stmt_(stmt) {}

  // Parameters are 1-based, as in SQLite.
  void Bind(int i, double v) { sqlite3_bind_double(stmt_.get(), i, v); }
  void Bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_.get(), i, v); }
  void Bind(int i, std::string_view v) {
    sqlite3_bind_text(stmt_.get(), i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void BindNull(int i) { sqlite3_bind_null(stmt_.get(), i); }
  template <typename T>
  void BindOptional(int i, const std::optional<T>& v) {
    if (v) {
      Bind(i, *v);
    } else {
      BindNull(i);
    }
  }

  // One step: true while a row is available, false when done.
  Result<bool> Step();
  // Steps a statement that returns no rows, then resets it for reuse.
  Status Run();
  void Reset() {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }

  bool IsNull(int col) const { return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL; }
  std::int64_t Int(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
  double Double(int col) const { return sqlite3_column_double(stmt_.get(), col); }
  std::string Text(int col) const;
  std::optional<double> OptionalDouble(int col) const {
    return IsNull(col) ? std::nullopt : std::optional<double>(Double(col));
  }
  std::optional<std::int64_t> OptionalInt(int col) const {
    return IsNull(col) ? std::nullopt : std::optional<std::int64_t>(Int(col));
  }

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(Db& db) : db_(db) {}
  Status Begin() {
    Status s = db_.Exec("BEGIN IMMEDIATE");
    open_ = s.ok();
    return s;
  }
  Status Commit();
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  Db& db_;
  bool open_ = false;
};

// Maps a SQLite result code to a Status: full disk and busy database are
// kUnavailable (may pass), read-only and cannot-open kPermissionDenied.
Status SqliteStatus(int rc, std::string_view what, sqlite3* db);

}  // namespace gpuwatch::store
