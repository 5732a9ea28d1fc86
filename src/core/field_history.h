// FieldHistory: the recent past of every numeric GPU field, kept as numbers.
//
// For the last `capacity` snapshots it holds each one's time and, per GPU (by
// NVML index) and per device field that has held a number, the value: NaN
// where the reading was missing, the GPU was absent or not healthy. A whole
// snapshot kept for the same purpose costs tens of times more (every reading
// carries its state and the driver's words), which is why the daemon keeps
// this, not snapshots, to answer /api/v1/history without --db.
//
// Not thread-safe: its owner locks.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "gpuwatch/snapshot.h"

namespace gpuwatch {

class FieldHistory {
 public:
  explicit FieldHistory(std::size_t capacity);

  // Appends a snapshot, dropping the oldest when full. A stale snapshot (a
  // republished old one) is not a sample and is skipped.
  void Add(const Snapshot& snapshot);

  // What Read() returns: times oldest first, and for each field asked its
  // values at those times (NaN: no number).
  struct Window {
    std::vector<std::chrono::system_clock::time_point> times;
    std::vector<std::vector<double>> values;  // one per field asked, each times.size() long
  };
  // The samples with from <= time < to, of GPU `device` (NaN throughout for a
  // GPU never seen).
  Window Read(int device, const std::vector<FieldId>& fields,
              std::chrono::system_clock::time_point from,
              std::chrono::system_clock::time_point to) const;

  std::size_t size() const { return size_; }

 private:
  static constexpr FieldRange kDeviceRange = RangeOf(Scope::kDevice);
  // One GPU's columns: for each device field, its ring of values (empty
  // until the field first holds a number).
  using Columns = std::array<std::vector<double>, kDeviceRange.count>;

  std::size_t capacity_;
  std::size_t size_ = 0;
  std::size_t next_ = 0;  // the slot the next sample goes to
  std::vector<std::int64_t> time_ns_;
  std::map<int, std::unique_ptr<Columns>> devices_;
};

}  // namespace gpuwatch
