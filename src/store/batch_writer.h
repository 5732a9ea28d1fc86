// Writes one batch (snapshots, events, marks) in one transaction. No
// threads: HistoryWriter calls it on its writer thread. A batch is all or
// nothing: when Write() fails nothing of it is in the file.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"
#include "store/history_types.h"
#include "store/sqlite.h"

namespace gpuwatch::store {

struct Batch {
  std::vector<std::shared_ptr<const Snapshot>> snapshots;
  std::vector<Event> events;
  std::vector<Mark> marks;
  bool empty() const { return snapshots.empty() && events.empty() && marks.empty(); }
};

std::int64_t ToMillis(TimePoint t);
TimePoint FromMillis(std::int64_t ms);

class BatchWriter {
 public:
  // `db` must have been through PrepareForWriting() and outlive this.
  static Result<BatchWriter> Create(Db& db);
  Status Write(const Batch& batch);

 private:
  explicit BatchWriter(Db& db) : db_(&db) {}
  Status WriteSnapshot(const Snapshot& s);
  Result<std::int64_t> DeviceId(const DeviceSample& d, std::int64_t ts);
  Result<std::int64_t> ProcessId(std::int64_t device_id, const ProcessSample& p, std::int64_t ts);
  Status WriteEvent(const Event& e);
  Status WriteMark(const Mark& m);

  Db* db_;
  Stmt upsert_device_, upsert_process_, insert_device_raw_, insert_process_raw_;
  Stmt touch_device_, touch_process_, insert_event_, insert_mark_;
  std::vector<FieldId> device_fields_, process_fields_;
};

}  // namespace gpuwatch::store
