#include "core/driver_calls.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

namespace gpuwatch {
namespace {

// The calls in flight, in a fixed table of lock-free slots rather than a map
// under a mutex, so that a signal handler may read it (OldestCallSince): the
// exit guard needs no thread of its own (engine/signals.cc). A slot's
// `since` is 0 when free, kClaimed while its text is written, else the
// call's start in steady-clock nanoseconds; a reader takes a slot's text only
// if `since` reads the same before and after it.
constexpr std::uint64_t kClaimed = ~std::uint64_t{0};
constexpr std::size_t kSlots = 256;  // calls at once: one a GPU reader, the opening

struct Slot {
  std::atomic<std::uint64_t> since{0};
  std::array<std::atomic<char>, kDriverCallTextSize> what{};
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<char>::is_always_lock_free);

std::array<Slot, kSlots> g_slots;  // constant-initialised, trivially destroyed

std::uint64_t ToNanos(std::chrono::steady_clock::time_point t) {
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(ns));
}

}  // namespace

DriverCallScope::DriverCallScope(std::string what) {
  const std::uint64_t now = ToNanos(std::chrono::steady_clock::now());
  for (std::size_t i = 0; i < kSlots; ++i) {
    std::uint64_t free = 0;
    if (!g_slots[i].since.compare_exchange_strong(free, kClaimed, std::memory_order_acquire))
      continue;
    const std::size_t n = std::min(what.size(), kDriverCallTextSize - 1);
    for (std::size_t c = 0; c < n; ++c)
      g_slots[i].what[c].store(what[c], std::memory_order_relaxed);
    g_slots[i].what[n].store('\0', std::memory_order_relaxed);
    g_slots[i].since.store(now, std::memory_order_release);
    slot_ = static_cast<int>(i);
    return;
  }
  slot_ = -1;  // more calls at once than slots: this one goes unreported
}

DriverCallScope::~DriverCallScope() {
  if (slot_ >= 0)
    g_slots[static_cast<std::size_t>(slot_)].since.store(0, std::memory_order_release);
}

std::uint64_t OldestCallSince(std::uint64_t before_ns, char* what) {
  std::uint64_t oldest = 0;
  for (Slot& slot : g_slots) {
    const std::uint64_t since = slot.since.load(std::memory_order_acquire);
    if (since == 0 || since == kClaimed || since >= before_ns) continue;
    if (oldest != 0 && since >= oldest) continue;
    char text[kDriverCallTextSize];
    for (std::size_t c = 0; c < kDriverCallTextSize; ++c)
      text[c] = slot.what[c].load(std::memory_order_relaxed);
    text[kDriverCallTextSize - 1] = '\0';
    if (slot.since.load(std::memory_order_acquire) != since) continue;  // ended meanwhile
    oldest = since;
    for (std::size_t c = 0; c < kDriverCallTextSize; ++c) what[c] = text[c];
  }
  return oldest;
}

std::optional<DriverCall> OldestDriverCall() {
  char what[kDriverCallTextSize];
  const std::uint64_t since = OldestCallSince(~std::uint64_t{0} - 1, what);
  if (since == 0) return std::nullopt;
  return DriverCall{what, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(since))};
}

std::string DescribeCall(std::string_view what, std::chrono::milliseconds age) {
  return fmt::format("{} has not returned for {} s", what,
                     std::chrono::duration_cast<std::chrono::seconds>(age).count());
}

std::optional<std::string> DescribeHungCall(std::chrono::milliseconds min_age) {
  const auto call = OldestDriverCall();
  if (!call) return std::nullopt;
  const auto age = std::chrono::steady_clock::now() - call->since;
  if (age < min_age) return std::nullopt;
  return DescribeCall(call->what, std::chrono::duration_cast<std::chrono::milliseconds>(age));
}

}  // namespace gpuwatch
