#include "core/field_history.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuwatch {
namespace {

constexpr double kNoNumber = std::numeric_limits<double>::quiet_NaN();

std::int64_t Ns(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

FieldHistory::FieldHistory(std::size_t capacity)
    : capacity_(std::max<std::size_t>(capacity, 1)), time_ns_(capacity_, 0) {}

void FieldHistory::Add(const Snapshot& s) {
  if (s.stale) return;
  const std::size_t slot = next_;
  time_ns_[slot] = Ns(s.time);
  next_ = (next_ + 1) % capacity_;
  size_ = std::min(size_ + 1, capacity_);

  std::map<int, const DeviceSample*> present;  // the last sample of each index, as the API reads it
  for (const DeviceSample& d : s.devices) present[d.index] = &d;
  for (const auto& [index, d] : present) {
    auto& columns = devices_[index];
    if (!columns) columns = std::make_unique<Columns>();
  }
  for (auto& [index, columns] : devices_) {
    auto it = present.find(index);
    const DeviceSample* d =
        it != present.end() && it->second->health == DeviceHealth::kOk ? it->second : nullptr;
    for (std::size_t i = 0; i < kDeviceRange.count; ++i) {
      std::vector<double>& column = (*columns)[i];
      const Reading* r =
          d != nullptr ? &d->fields[static_cast<FieldId>(kDeviceRange.first + i)] : nullptr;
      const bool number = r != nullptr && r->is_number();
      if (column.empty()) {
        if (!number) continue;
        column.assign(capacity_, kNoNumber);
      }
      column[slot] = number ? r->number() : kNoNumber;
    }
  }
}

FieldHistory::Window FieldHistory::Read(int device, const std::vector<FieldId>& fields,
                                        std::chrono::system_clock::time_point from,
                                        std::chrono::system_clock::time_point to) const {
  Window w;
  w.values.resize(fields.size());
  auto it = devices_.find(device);
  const Columns* columns = it == devices_.end() ? nullptr : it->second.get();
  const std::int64_t from_ns = Ns(from), to_ns = Ns(to);
  const std::size_t oldest = (next_ + capacity_ - size_) % capacity_;
  for (std::size_t k = 0; k < size_; ++k) {
    const std::size_t slot = (oldest + k) % capacity_;
    if (time_ns_[slot] < from_ns || time_ns_[slot] >= to_ns) continue;
    w.times.emplace_back(std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::nanoseconds(time_ns_[slot])));
    for (std::size_t f = 0; f < fields.size(); ++f) {
      double v = kNoNumber;
      if (columns != nullptr && DeviceFields::Holds(fields[f])) {
        const auto& column = (*columns)[static_cast<std::size_t>(fields[f]) - kDeviceRange.first];
        if (!column.empty()) v = column[slot];
      }
      w.values[f].push_back(v);
    }
  }
  return w;
}

}  // namespace gpuwatch
