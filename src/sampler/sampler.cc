#include "sampler/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <optional>
#include <thread>

#include "core/driver_calls.h"
#include "core/mutex.h"
#include "core/thread_name.h"
#include "sampler/device_readers.h"
#include "sampler/sampler_state.h"

namespace gpuwatch {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds HangAfter(const SamplerOptions& o) {
  if (o.hang_after.count() > 0) return o.hang_after;
  return std::max(std::chrono::milliseconds(2000), 5 * o.interval);
}

struct Working {
  HostFields host;
  std::vector<DeviceSample> devices;  // the last values read, per GPU
  std::vector<std::vector<DeviceSample>> mig;
  std::vector<bool> needs_static;
  std::unique_ptr<DeviceReaders> readers;  // live GPUs
  Clock::time_point last_slow{};
  Clock::time_point last_costly{};
  Clock::time_point last_buffers{};
  bool first = true;
};

// A GPU still in a driver call: its last values, marked stale.
void MarkStale(DeviceSample& d, Clock::duration in_call) {
  if (d.health != DeviceHealth::kOk) return;  // lost or failing: that says more
  d.health = DeviceHealth::kStale;
  d.health_detail = DescribeCall(fmt::format("reading GPU {}", d.index),
                                 std::chrono::duration_cast<std::chrono::milliseconds>(in_call)) +
                    "; the values are the last ones read";
}

// Reads every GPU: inline for a recording, else on the readers (DeviceReaders),
// waiting for them up to the hang limit; attributes the processes of those
// read. Puts the GPUs into `s`, those still in a call with their last values
// marked stale, and returns how many those are.
std::size_t ReadGpus(Sampler::State& st, Working& w, const std::vector<FieldMask>& fields,
                     const FieldMask& mig_fields, Clock::time_point t0, std::stop_token stop,
                     Snapshot& s) {
  const std::size_t n = w.devices.size();
  std::vector<std::optional<Clock::duration>> in_call(n);  // set: still in a call
  if (st.recording) {
    for (std::size_t i = 0; i < n; ++i) {
      ReadGpu(*st.backend, static_cast<int>(i), fields[i], &mig_fields, st.options.processes,
              w.devices[i], w.mig[i]);
    }
  } else {
    if (!w.readers) {
      // Another reader takes the GPUs waiting behind a call this slow.
      const auto stall_after = std::min(std::chrono::milliseconds(100), HangAfter(st.options) / 10);
      w.readers = std::make_unique<DeviceReaders>(st.backend, static_cast<int>(n),
                                                  st.options.processes, ReaderTiming{stall_after});
    }
    // The wait is bounded: this thread is not in a driver call, the watchdog need not look.
    st.sample_started_ns = 0;
    auto gpus = w.readers->Read(fields, mig_fields, t0 + HangAfter(st.options), stop);
    st.sample_started_ns = Clock::now().time_since_epoch().count();
    for (std::size_t i = 0; i < n; ++i) {
      if (gpus[i].fresh) {
        w.devices[i] = std::move(gpus[i].device);
        w.mig[i] = std::move(gpus[i].mig);
      } else {
        in_call[i] = gpus[i].in_call;
      }
    }
  }
  std::size_t stale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (in_call[i]) {
      ++stale;
    } else {
      // A lost device has its identity re-read when it comes back.
      w.needs_static[i] = w.devices[i].health != DeviceHealth::kOk;
      if (st.resolver) {
        for (auto& p : w.devices[i].processes) st.resolver->Resolve(p);
      }
    }
    s.devices.push_back(w.devices[i]);
    if (in_call[i]) MarkStale(s.devices.back(), *in_call[i]);
    for (const DeviceSample& m : w.mig[i]) {
      s.mig_devices.push_back(m);
      if (in_call[i]) MarkStale(s.mig_devices.back(), *in_call[i]);
    }
  }
  if (st.resolver) st.resolver->EndSample();
  return stale;
}

// One sample: which fields are due, read them, attribute processes.
Snapshot SampleOnce(Sampler::State& st, Working& w, std::stop_token stop) {
  const auto t0 = Clock::now();
  Snapshot s = StartSnapshot(*st.backend);
  if (w.first) {
    w.host = st.backend->ReadHost();
    const auto n = static_cast<std::size_t>(std::max(st.backend->DeviceCount(), 0));
    w.devices.resize(n);
    for (std::size_t i = 0; i < n; ++i) w.devices[i].index = static_cast<int>(i);
    w.mig.resize(n);
    w.needs_static.assign(n, true);
  }
  // A recording costs nothing to read: every field asked for, every sample.
  FieldMask due =
      st.recording ? AllFields() : FieldsWithCadence({Cadence::kInterval, Cadence::kEvents});
  if (w.first || t0 - w.last_slow >= st.options.slow_period) {
    due |= FieldsWithCadence({Cadence::kSlow});
    w.last_slow = t0;
  }
  if (w.first || t0 - w.last_buffers >= st.options.buffers_period) {
    due |= FieldsWithCadence({Cadence::kBuffers});
    w.last_buffers = t0;
  }
  if (w.first || t0 - w.last_costly >= st.options.costly_period) {
    due |= FieldsWithCadence({Cadence::kCostly});
    w.last_costly = t0;
  }
  due &= st.options.fields;
  const FieldMask with_static = due | (FieldsWithCadence({Cadence::kStatic}) & st.options.fields);
  std::vector<FieldMask> fields;
  for (std::size_t i = 0; i < w.devices.size(); ++i) {
    fields.push_back(w.needs_static[i] ? with_static : due);
  }
  s.host = w.host;
  const std::size_t stale =
      ReadGpus(st, w, fields, with_static & ~FieldsWithCadence({Cadence::kCostly}), t0, stop, s);
  // Nothing new was read: the last values, as the watchdog would publish them.
  s.stale = stale > 0 && stale == w.devices.size();
  FinishSnapshot(*st.backend, s);
  w.first = false;
  s.sample_duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
  return s;
}

void SamplingLoop(std::shared_ptr<Sampler::State> st, std::stop_token stop) {
  NameThisThread("gw-sampler");
  Working w;
  auto next = Clock::now();
  while (true) {
    if (auto due = st->backend->NextSampleDue()) next = *due;  // a recording's own pace
    {
      MutexLock lock(st->mu);
      if (next > Clock::now())
        st->cv.WaitUntil(lock, next, [&]() REQUIRES(st->mu) { return st->stopping; });
      // A recording waits rather than push a follower's next snapshot out of the ring.
      if (st->recording && !st->RoomFor(1)) {
        st->waiting_for_room = true;
        st->cv.Wait(lock,
                    [&]() REQUIRES(st->mu) { return st->stopping || st->RoomFor(st->Resume()); });
        st->waiting_for_room = false;
      }
      if (st->stopping) break;
    }
    st->sample_started_ns = Clock::now().time_since_epoch().count();
    Snapshot s = SampleOnce(*st, w, stop);
    st->sample_started_ns = 0;
    if (stop.stop_requested()) break;  // the readers' wait was cut short
    if (!s.stale) {
      st->hung = false;
      st->Publish(std::move(s));
    } else if (!st->hung.exchange(true)) {
      // Every GPU is still in a call: the last snapshot once more, marked
      // stale and as old as it is (the watchdog's copy, had it seen first).
      {
        MutexLock lock(st->mu);
        if (st->latest) s.time = st->latest->time;
      }
      st->Publish(std::move(s));
    }
    if (st->backend->Finished()) break;  // a recording played to its end
    if (st->recording) continue;
    next += st->options.interval;
    const auto now = Clock::now();
    if (next < now) next = now;  // overran: don't try to catch up in a burst
  }
  MutexLock lock(st->mu);
  st->finished = true;
  st->cv.NotifyAll();
}

void WatchdogLoop(std::shared_ptr<Sampler::State> st, std::stop_token stop) {
  NameThisThread("gw-watchdog");
  const auto limit = HangAfter(st->options);
  const auto tick =
      std::clamp(limit / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(200));
  while (!stop.stop_requested()) {
    std::this_thread::sleep_for(tick);
    const std::int64_t started = st->sample_started_ns;
    if (started == 0 || st->hung) continue;
    const auto running = Clock::now() - Clock::time_point(Clock::duration(started));
    if (running < limit) continue;
    st->hung = true;
    std::shared_ptr<const Snapshot> last;
    {
      MutexLock lock(st->mu);
      last = st->latest;
    }
    if (last) {
      Snapshot copy = *last;  // the last good values, marked stale
      copy.stale = true;
      const std::string why =
          DescribeHungCall(std::chrono::milliseconds(0)).value_or("a driver call has not returned");
      for (DeviceSample& d : copy.devices) {
        if (d.health != DeviceHealth::kOk) continue;
        d.health = DeviceHealth::kStale;
        d.health_detail = why + "; the values are the last ones read";
      }
      st->Publish(std::move(copy));
    }
  }
}

}  // namespace

Sampler::Sampler(std::unique_ptr<Backend> backend, std::unique_ptr<host::ProcessResolver> resolver,
                 SamplerOptions options)
    : state_(std::make_shared<State>(std::move(backend), std::move(resolver), options)) {}

Sampler::~Sampler() { Stop(); }

void Sampler::Start() {
  if (state_->sampling.joinable()) return;
  state_->sampling =
      std::jthread([st = state_](std::stop_token stop) { SamplingLoop(st, std::move(stop)); });
  // A recording makes no driver calls to hang, and a stale copy would be a duplicate sample.
  if (state_->recording) return;
  state_->watchdog = std::jthread([st = state_](std::stop_token stop) { WatchdogLoop(st, stop); });
}

void Sampler::Stop(std::chrono::milliseconds grace) {
  {
    MutexLock lock(state_->mu);
    state_->stopping = true;
    state_->cv.NotifyAll();
  }
  state_->sampling.request_stop();  // ends a wait for the GPU readers
  if (state_->watchdog.joinable()) {
    state_->watchdog.request_stop();
    state_->watchdog.join();
  }
  if (!state_->sampling.joinable()) return;
  MutexLock lock(state_->mu);
  if (state_->cv.WaitFor(lock, grace, [&]() REQUIRES(state_->mu) { return state_->finished; })) {
    lock.Unlock();
    state_->sampling.join();
  } else {
    // Stuck in a driver call: it keeps the shared state alive and ends on its own.
    lock.Unlock();
    state_->sampling.detach();
  }
}

bool Sampler::hung() const { return state_->hung; }

bool Sampler::finished() const {
  MutexLock lock(state_->mu);
  return state_->finished;
}

}  // namespace gpuwatch
