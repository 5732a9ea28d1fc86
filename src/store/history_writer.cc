#include "store/history_writer.h"

#include <fmt/format.h>

#include <utility>

#include "core/mutex.h"
#include "core/thread_name.h"
#include "store/batch_writer.h"
#include "store/rollup.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace gpuwatch::store {

Result<std::unique_ptr<HistoryWriter>> HistoryWriter::Open(const std::string& path,
                                                           HistoryOptions options,
                                                           WarningSink on_warning) {
  Result<Db> db = Db::Open(path, Db::Mode::kReadWriteCreate);
  if (!db) return db.error();
  auto owned = std::make_unique<Db>(std::move(*db));
  if (Status s = PrepareForWriting(*owned); !s.ok()) return s;
  Result<BatchWriter> batch_writer = BatchWriter::Create(*owned);
  if (!batch_writer) {
    return batch_writer.error().WithContext(fmt::format("history database '{}'", path));
  }
  return std::unique_ptr<HistoryWriter>(
      new HistoryWriter(path, options, std::move(on_warning), std::move(owned),
                        std::make_unique<BatchWriter>(std::move(*batch_writer))));
}

HistoryWriter::HistoryWriter(std::string path, HistoryOptions options, WarningSink on_warning,
                             std::unique_ptr<Db> db, std::unique_ptr<BatchWriter> batch_writer)
    : path_(std::move(path)),
      options_(options),
      on_warning_(std::move(on_warning)),
      db_(std::move(db)),
      batch_writer_(std::move(batch_writer)),
      max_bytes_(options.max_database_bytes),
      snapshots_(options.queue_capacity),
      events_(options.event_queue_capacity),
      marks_(options.event_queue_capacity) {
  ApplySizeCap();
  thread_ = std::jthread([this](std::stop_token stop) { Run(std::move(stop)); });
}

HistoryWriter::~HistoryWriter() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void HistoryWriter::Append(std::shared_ptr<const Snapshot> snapshot) {
  if (!snapshot) return;
  MutexLock lock(mu_);
  ++appended_;
  ++stats_.snapshots_appended;
  if (snapshot->stale) {
    ++stats_.snapshots_stale;
    return;
  }
  snapshots_.Push(std::move(snapshot));
}

void HistoryWriter::Append(Event event) {
  MutexLock lock(mu_);
  ++appended_;
  events_.Push(std::move(event));
}

void HistoryWriter::AppendMark(Mark mark) {
  MutexLock lock(mu_);
  ++appended_;
  marks_.Push(std::move(mark));
}

Status HistoryWriter::Flush() {
  MutexLock lock(mu_);
  const std::uint64_t target = appended_;
  flush_wanted_ = std::max(flush_wanted_, target);
  wake_.NotifyAll();
  done_.Wait(lock, [&]() REQUIRES(mu_) { return processed_ >= target; });
  return last_status_;
}

WriterStats HistoryWriter::stats() const {
  MutexLock lock(mu_);
  WriterStats s = stats_;
  s.snapshots_dropped = snapshots_.dropped();
  s.events_dropped = events_.dropped() + marks_.dropped();
  return s;
}

void HistoryWriter::ApplySizeCap() {
  const std::uint64_t want = max_bytes_.load();
  if (want == applied_max_bytes_) return;
  Result<std::int64_t> page_size = db_->QueryInt("PRAGMA page_size");
  if (!page_size || *page_size <= 0) return;
  const std::uint64_t pages =
      want == 0 ? 0xfffffffeULL : std::max<std::uint64_t>(1, want / *page_size);
  // Answers with the new limit (never below the current size).
  if (db_->QueryInt(fmt::format("PRAGMA max_page_count={}", pages))) applied_max_bytes_ = want;
}

void HistoryWriter::Run(std::stop_token stop) {
  NameThisThread("gw-history");
  bool maintenance_pending = true;  // catch up on what an earlier run left
  for (;;) {
    Batch batch;
    std::uint64_t upto = 0;
    {
      MutexLock lock(mu_);
      wake_.WaitFor(lock, stop, options_.batch_interval,
                    [&]() REQUIRES(mu_) { return flush_wanted_ > processed_; });
      batch.snapshots = snapshots_.TakeAll();
      batch.events = events_.TakeAll();
      batch.marks = marks_.TakeAll();
      upto = appended_;
    }

    ApplySizeCap();
    const Status written = batch.empty() ? Status::Ok() : batch_writer_->Write(batch);
    Status status = written;
    const bool attempted = !batch.empty() || maintenance_pending;
    if (written.ok() && attempted) {
      Result<bool> more = Maintain(*db_, options_.retention);
      maintenance_pending = !more || *more;
      if (!more) status = more.error();
    }

    bool warn = false;
    {
      MutexLock lock(mu_);
      if (!batch.empty()) ++stats_.batches;
      if (written.ok()) {
        stats_.snapshots_written += batch.snapshots.size();
        stats_.events_written += batch.events.size() + batch.marks.size();
      } else {
        ++stats_.failed_batches;
        stats_.snapshots_lost += batch.snapshots.size();
        stats_.events_lost += batch.events.size() + batch.marks.size();
      }
      if (status.ok()) {
        if (attempted) stats_.failing = false;
      } else {
        warn = !stats_.failing;
        if (warn) ++stats_.warnings;
        stats_.failing = true;
      }
      last_status_ = status;
      processed_ = upto;
    }
    done_.NotifyAll();
    if (warn && on_warning_) {
      on_warning_(Status::Unavailable(fmt::format(
          "history '{}': cannot write ({}); sampling goes on, samples are not recorded until "
          "writing works again",
          path_, status.message())));
    }

    if (stop.stop_requested()) {
      MutexLock lock(mu_);
      if (snapshots_.empty() && events_.empty() && marks_.empty()) break;
    }
  }
}

}  // namespace gpuwatch::store
