#include "sampler/device_readers.h"

#include <thread>

#include "core/mutex.h"
#include "core/thread_name.h"

namespace gpuwatch {

using Clock = std::chrono::steady_clock;

struct DeviceReaders::Shared {
  struct Slot {
    std::uint64_t asked = 0;  // reads asked for; one is in progress while asked > done
    std::uint64_t done = 0;
    FieldMask fields;
    FieldMask mig_fields;
    Clock::time_point started{};
    CondVar asked_cv;  // a read asked for, or stop: this slot's reader waits
    // Written by the reader alone while a read is in progress; read by Read() otherwise.
    DeviceSample device;
    std::vector<DeviceSample> mig;
  };

  Shared(bool p, int count) : processes(p), slots(static_cast<std::size_t>(count)) {}

  const bool processes;
  Mutex mu;
  StopCondVar done_cv;  // a read done: Read() waits
  bool stop GUARDED_BY(mu) = false;
  std::vector<Slot> slots GUARDED_BY(mu);  // but see Slot; never resized
  std::vector<std::thread> threads;
};

namespace {

void ReaderLoop(const std::shared_ptr<Backend>& backend,
                const std::shared_ptr<DeviceReaders::Shared>& shared, int index) {
  NameThisThread("gw-read-gpu" + std::to_string(index));
  DeviceReaders::Shared& sh = *shared;
  MutexLock lock(sh.mu);
  auto& slot = sh.slots[static_cast<std::size_t>(index)];
  while (true) {
    slot.asked_cv.Wait(lock, [&]() REQUIRES(sh.mu) { return sh.stop || slot.asked > slot.done; });
    if (sh.stop) return;
    const FieldMask fields = slot.fields;
    const FieldMask mig_fields = slot.mig_fields;
    lock.Unlock();
    std::vector<DeviceSample> mig;
    ReadGpu(*backend, index, fields, &mig_fields, sh.processes, slot.device, mig);
    lock.Lock();
    slot.mig = std::move(mig);
    slot.done = slot.asked;
    sh.done_cv.NotifyOne();
  }
}

}  // namespace

DeviceReaders::DeviceReaders(std::shared_ptr<Backend> backend, int count, bool processes)
    : count_(count), shared_(std::make_shared<Shared>(processes, count)) {
  for (int i = 0; i < count; ++i) {
    shared_->threads.emplace_back(
        [backend, shared = shared_, i] { ReaderLoop(backend, shared, i); });
  }
}

DeviceReaders::~DeviceReaders() {
  std::vector<bool> in_call;
  {
    MutexLock lock(shared_->mu);
    shared_->stop = true;
    for (auto& slot : shared_->slots) {
      in_call.push_back(slot.asked > slot.done);
      slot.asked_cv.NotifyOne();
    }
  }
  for (std::size_t i = 0; i < shared_->threads.size(); ++i) {
    // A reader in a call holds the backend and the shared state, and ends when the call returns.
    if (in_call[i]) {
      shared_->threads[i].detach();
    } else {
      shared_->threads[i].join();
    }
  }
}

std::vector<DeviceReaders::Gpu> DeviceReaders::Read(const std::vector<FieldMask>& fields,
                                                    const FieldMask& mig_fields,
                                                    Clock::time_point deadline,
                                                    std::stop_token stop) {
  Shared& sh = *shared_;
  std::vector<bool> asked(static_cast<std::size_t>(count_), false);
  MutexLock lock(sh.mu);
  const auto now = Clock::now();
  for (std::size_t i = 0; i < sh.slots.size(); ++i) {
    auto& slot = sh.slots[i];
    if (slot.asked > slot.done) continue;  // still in the call of an earlier round
    slot.fields = fields[i];
    slot.mig_fields = mig_fields;
    slot.started = now;
    ++slot.asked;
    asked[i] = true;
    slot.asked_cv.NotifyOne();
  }
  sh.done_cv.WaitUntil(lock, stop, deadline, [&]() REQUIRES(sh.mu) {
    for (std::size_t i = 0; i < sh.slots.size(); ++i) {
      if (asked[i] && sh.slots[i].done < sh.slots[i].asked) return false;
    }
    return true;
  });
  std::vector<Gpu> out(sh.slots.size());
  const auto end = Clock::now();
  for (std::size_t i = 0; i < sh.slots.size(); ++i) {
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
  return out;
}

}  // namespace gpuwatch
