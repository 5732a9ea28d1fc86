// HistoryWriter: records snapshots, events and marks into the SQLite history
// (schema in docs/history.md) without ever blocking the caller.
//
// Append*() only queue (bounded; when full the oldest snapshot is dropped
// and counted). A writer thread commits one batch about every
// `batch_interval`, then rolls raw rows up into the per-minute and per-hour
// tiers and applies retention, a bounded amount per batch. A crash (kill -9)
// loses at most the batch in flight.
//
// When writing fails (disk full, database capped, I/O error) the batch is
// dropped and counted, `on_warning` is called once for the episode, and the
// writer keeps trying with the next batch; what is in the file stays there.
//
// Thread-safety: every public method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/mutex.h"
#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"
#include "store/drop_oldest_queue.h"
#include "store/history_types.h"

namespace gpuwatch::store {

class Db;
class BatchWriter;
struct Batch;

class HistoryWriter {
 public:
  // Called on the writer thread, once per episode of failed writes.
  using WarningSink = std::function<void(const Status&)>;

  // Opens or creates the database at `path` and checks it can be written:
  // fails (naming the path) when it cannot, before any thread starts, so a
  // front end can refuse to start a child process.
  static Result<std::unique_ptr<HistoryWriter>> Open(const std::string& path,
                                                     HistoryOptions options = {},
                                                     WarningSink on_warning = {});
  // Writes everything still queued, then closes the database.
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  // Never block on disk. Stale snapshots (the watchdog re-publishing the
  // last good one) are not stored again.
  void Append(std::shared_ptr<const Snapshot> snapshot);
  void Append(Event event);
  void AppendMark(Mark mark);

  // Blocks until everything appended before the call has been written (or
  // dropped or lost, and counted). Not OK when the last batch failed.
  Status Flush();

  // Changes the size cap (0: none) from the next batch on.
  void SetMaxDatabaseBytes(std::uint64_t bytes) { max_bytes_.store(bytes); }

  WriterStats stats() const;
  const std::string& path() const { return path_; }

 private:
  HistoryWriter(std::string path, HistoryOptions options, WarningSink on_warning,
                std::unique_ptr<Db> db, std::unique_ptr<BatchWriter> batch_writer);
  void Run(std::stop_token stop);
  void ApplySizeCap();

  const std::string path_;
  const HistoryOptions options_;
  const WarningSink on_warning_;
  std::unique_ptr<Db> db_;                     // writer thread only, after Open()
  std::unique_ptr<BatchWriter> batch_writer_;  // writer thread only
  std::atomic<std::uint64_t> max_bytes_;
  std::uint64_t applied_max_bytes_ = 0;  // writer thread only

  mutable Mutex mu_;
  StopCondVar wake_;  // new work, flush or stop
  CondVar done_;      // a batch finished
  DropOldestQueue<std::shared_ptr<const Snapshot>> snapshots_ GUARDED_BY(mu_);
  DropOldestQueue<Event> events_ GUARDED_BY(mu_);
  DropOldestQueue<Mark> marks_ GUARDED_BY(mu_);
  std::uint64_t appended_ GUARDED_BY(mu_) = 0;   // every Append*, in order
  std::uint64_t processed_ GUARDED_BY(mu_) = 0;  // appends the writer is done with
  std::uint64_t flush_wanted_ GUARDED_BY(mu_) = 0;
  Status last_status_ GUARDED_BY(mu_);
  WriterStats stats_ GUARDED_BY(mu_);

  std::jthread thread_;  // last: stops and joins before the members above go
};

}  // namespace gpuwatch::store
