// A bounded FIFO that never blocks the producer: pushing onto a full queue
// drops the oldest element and counts it. Not synchronized; the owner holds
// the lock (HistoryWriter keeps it under its mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace gpuwatch::store {

template <typename T>
class DropOldestQueue {
 public:
  explicit DropOldestQueue(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Returns true when an older element was dropped to make room.
  bool Push(T value) {
    bool dropped = false;
    if (items_.size() >= capacity_) {
      items_.pop_front();
      ++dropped_;
      dropped = true;
    }
    items_.push_back(std::move(value));
    return dropped;
  }

  // Everything queued, oldest first; the queue is empty afterwards.
  std::vector<T> TakeAll() {
    std::vector<T> out(std::make_move_iterator(items_.begin()),
                       std::make_move_iterator(items_.end()));
    items_.clear();
    return out;
  }

  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::size_t capacity() const { return capacity_; }
  std::uint64_t dropped() const { return dropped_; }  // since construction

 private:
  std::size_t capacity_;
  std::deque<T> items_;
  std::uint64_t dropped_ = 0;
};

}  // namespace gpuwatch::store
