#include "sampler/device_readers.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <system_error>
#include <thread>

#include "core/mutex.h"
#include "core/thread_name.h"

namespace gpuwatch {

using Clock = std::chrono::steady_clock;

struct DeviceReaders::Shared {
  struct Slot {
    std::uint64_t asked = 0;  // reads asked for; one is queued or in progress while asked > done
    std::uint64_t done = 0;
    FieldMask fields;
    FieldMask mig_fields;
    Clock::time_point started{};  // when it was queued, then when its read began
    // Written by a reader alone while its read is in progress; read by Read() otherwise.
    DeviceSample device;
    std::vector<DeviceSample> mig;
  };
  // One reader thread. Every member but `thread` is guarded by `mu`.
  struct Reader {
    std::thread thread;
    CondVar wake_cv;
    bool woken = false;    // asked to take the queue, not yet at it
    bool reading = false;  // in a driver call since `call_started`
    bool ended = false;    // its thread has left the loop: to be joined
    Clock::time_point call_started{};
  };

  Shared(bool p, int count, ReaderTiming t)
      : processes(p), timing(t), slots(static_cast<std::size_t>(count)) {}

  const bool processes;
  const ReaderTiming timing;
  Mutex mu;
  StopCondVar drained_cv;  // a read done with the queue empty: Read() waits
  bool stop GUARDED_BY(mu) = false;
  std::vector<Slot> slots GUARDED_BY(mu);  // but see Slot; never resized
  std::deque<int> queue GUARDED_BY(mu);    // GPUs asked for that no reader has taken yet
  std::vector<std::unique_ptr<Reader>> readers GUARDED_BY(mu);  // the first idle one is woken
  int named GUARDED_BY(mu) = 0;                                 // readers started, for names
};

namespace {

using Shared = DeviceReaders::Shared;

// Whether a reader other than `self` is idle, so that `self` may end.
bool AnotherIdle(const Shared& sh, const Shared::Reader* self) REQUIRES(sh.mu) {
  return std::any_of(sh.readers.begin(), sh.readers.end(),
                     [&](const auto& r) { return r.get() != self && !r->reading && !r->ended; });
}

void ReaderLoop(const std::shared_ptr<Backend>& backend, const std::shared_ptr<Shared>& shared,
                Shared::Reader* self, int number) {
  NameThisThread(fmt::format("gw-reader{}", number));
  Shared& sh = *shared;
  MutexLock lock(sh.mu);
  while (true) {
    const bool woken = self->wake_cv.WaitFor(
        lock, sh.timing.idle_exit, [&]() REQUIRES(sh.mu) { return sh.stop || self->woken; });
    if (sh.stop) break;
    if (!woken) {
      if (AnotherIdle(sh, self)) break;  // one idle reader is enough
      continue;
    }
    self->woken = false;
    while (!sh.queue.empty() && !sh.stop) {
      const int index = sh.queue.front();
      sh.queue.pop_front();
      auto& slot = sh.slots[static_cast<std::size_t>(index)];
      slot.started = self->call_started = Clock::now();
      self->reading = true;
      const FieldMask fields = slot.fields;
      const FieldMask mig_fields = slot.mig_fields;
      lock.Unlock();
      std::vector<DeviceSample> mig;
      ReadGpu(*backend, index, fields, &mig_fields, sh.processes, slot.device, mig);
      lock.Lock();
      self->reading = false;
      slot.mig = std::move(mig);
      slot.done = slot.asked;
      // The last read of a round finds the queue empty; Read() need not wake for the others.
      if (sh.queue.empty()) sh.drained_cv.NotifyOne();
    }
  }
  self->ended = true;
}

// Wakes the first idle reader, or starts one when none is idle. False when
// no thread could be started. `sh` is `*shared`.
bool WakeOne(const std::shared_ptr<Backend>& backend, const std::shared_ptr<Shared>& shared,
             Shared& sh) REQUIRES(sh.mu) {
  for (auto& r : sh.readers) {
    if (!r->reading && !r->ended && !r->woken) {
      r->woken = true;
      r->wake_cv.NotifyOne();
      return true;
    }
  }
  auto reader = std::make_unique<Shared::Reader>();
  Shared::Reader* r = reader.get();
  r->woken = true;
  try {
    r->thread = std::thread(
        [backend, shared, r, number = sh.named] { ReaderLoop(backend, shared, r, number); });
  } catch (const std::system_error&) {
    return false;  // out of threads: the GPUs queued wait for a reader to come free
  }
  ++sh.named;
  sh.readers.push_back(std::move(reader));
  return true;
}

}  // namespace

DeviceReaders::DeviceReaders(std::shared_ptr<Backend> backend, int count, bool processes,
                             ReaderTiming timing)
    : count_(count),
      backend_(std::move(backend)),
      shared_(std::make_shared<Shared>(processes, count, timing)) {}

DeviceReaders::~DeviceReaders() {
  std::vector<std::thread> idle, in_call;
  {
    MutexLock lock(shared_->mu);
    shared_->stop = true;
    for (auto& r : shared_->readers) {
      r->wake_cv.NotifyOne();
      // A reader in a call holds the backend and the shared state, and ends when the call returns.
      (r->reading ? in_call : idle).push_back(std::move(r->thread));
    }
  }
  for (auto& t : idle) t.join();
  for (auto& t : in_call) t.detach();
}

int DeviceReaders::threads() const {
  MutexLock lock(shared_->mu);
  return static_cast<int>(std::count_if(shared_->readers.begin(), shared_->readers.end(),
                                        [](const auto& r) { return !r->ended; }));
}

std::vector<DeviceReaders::Gpu> DeviceReaders::Read(const std::vector<FieldMask>& fields,
                                                    const FieldMask& mig_fields,
                                                    Clock::time_point deadline,
                                                    std::stop_token stop) {
  Shared& sh = *shared_;
  const auto n = static_cast<std::size_t>(count_);
  std::vector<bool> asked(n, false);
  std::vector<std::thread> ended;
  std::vector<Gpu> out(n);
  {
    MutexLock lock(sh.mu);
    std::erase_if(sh.readers, [&](auto& r) {
      if (r->ended) ended.push_back(std::move(r->thread));
      return r->ended;
    });
    const auto now = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      auto& slot = sh.slots[i];
      if (slot.asked > slot.done) continue;  // still in the call of an earlier round
      slot.fields = fields[i];
      slot.mig_fields = mig_fields;
      slot.started = now;
      ++slot.asked;
      asked[i] = true;
      sh.queue.push_back(static_cast<int>(i));
    }
    bool can_start = sh.queue.empty() || WakeOne(backend_, shared_, sh);
    const auto all_done = [&]() REQUIRES(sh.mu) {
      for (std::size_t i = 0; i < n; ++i) {
        if (asked[i] && sh.slots[i].done < sh.slots[i].asked) return false;
      }
      return true;
    };
    while (!all_done() && !stop.stop_requested()) {
      const auto t = Clock::now();
      if (t >= deadline) break;
      auto until = deadline;
      if (!sh.queue.empty() && can_start) {
        // GPUs wait: is a reader on its way to them? One just woken, or one
        // whose read is young; otherwise every reader is in a stalled call.
        bool coming = false;
        for (const auto& r : sh.readers) {
          if (r->ended || (!r->reading && !r->woken)) continue;
          const auto stalls =
              r->reading ? r->call_started + sh.timing.stall_after : t + sh.timing.stall_after;
          if (stalls > t) {
            coming = true;
            until = std::min(until, stalls);
          }
        }
        if (!coming) {
          can_start = WakeOne(backend_, shared_, sh);
          continue;
        }
      }
      sh.drained_cv.WaitUntil(lock, stop, until, all_done);
    }
    const auto end = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      const auto& slot = sh.slots[i];
      Gpu& g = out[i];
      g.fresh = slot.done == slot.asked;  // also a late read of an earlier round, now returned
      if (g.fresh) {
        g.device = slot.device;
        g.mig = slot.mig;
      } else {
        g.in_call = end - slot.started;
      }
    }
    // GPUs no reader reached: asked again next round.
    for (const int i : sh.queue) {
      auto& slot = sh.slots[static_cast<std::size_t>(i)];
      slot.asked = slot.done;
    }
    sh.queue.clear();
  }
  for (auto& t : ended) t.join();
  return out;
}

}  // namespace gpuwatch
