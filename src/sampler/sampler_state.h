// The state a Sampler shares with its sampling and watchdog threads and its
// followers (private to src/sampler): the ring of snapshots and where each
// follower is in it. sampler.cc takes the samples, sampler_ring.cc hands
// them out.
#pragma once

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <thread>

#include "core/mutex.h"
#include "sampler/sampler.h"

namespace gpuwatch {

struct Sampler::State {
  State(std::unique_ptr<Backend> b, std::unique_ptr<host::ProcessResolver> r, SamplerOptions o)
      : backend(std::move(b)),
        resolver(std::move(r)),
        options(o),
        recording(backend && backend->NextSampleDue().has_value()) {}

  // Used by the sampling thread alone once it runs, and by the GPU readers
  // (sampler/device_readers.h), which hold it while they are in a call.
  std::shared_ptr<Backend> backend;
  std::unique_ptr<host::ProcessResolver> resolver;
  const SamplerOptions options;
  // The backend keeps its own clock (Backend::NextSampleDue): it paces the
  // reads, and the sampler waits for followers instead of leaving them behind.
  const bool recording;

  struct FollowerState {
    std::uint64_t taken = 0;  // the sequence of the last snapshot taken
    std::uint64_t missed = 0;
  };

  mutable Mutex mu;
  mutable CondVar cv;
  std::shared_ptr<const Snapshot> latest GUARDED_BY(mu);
  std::deque<std::shared_ptr<const Snapshot>> history GUARDED_BY(mu);
  std::uint64_t sequence GUARDED_BY(mu) = 0;
  bool stopping GUARDED_BY(mu) = false;
  bool finished GUARDED_BY(mu) = false;
  std::map<std::uint64_t, FollowerState> followers GUARDED_BY(mu);  // by id
  std::uint64_t next_follower GUARDED_BY(mu) = 0;
  bool waiting_for_room GUARDED_BY(mu) = false;

  std::atomic<std::int64_t> sample_started_ns{0};  // 0 while idle
  std::atomic<bool> hung{false};

  std::jthread sampling;
  std::jthread watchdog;

  std::size_t Ring() const { return RingSize(options); }

  void Publish(Snapshot s) {
    MutexLock lock(mu);
    s.sequence = ++sequence;
    auto shared = std::make_shared<const Snapshot>(std::move(s));
    latest = shared;
    history.push_back(shared);
    Trim();
    cv.NotifyAll();
  }

  // Drops what every follower has taken (the newest stays, for a follower
  // still to come) and what is past the ring's size: a follower that keeps
  // up costs one snapshot, not the ring.
  void Trim() REQUIRES(mu) {
    std::uint64_t all_taken = sequence;
    for (const auto& [id, f] : followers) all_taken = std::min(all_taken, f.taken);
    while (history.size() > Ring() ||
           (history.size() > 1 && history.front()->sequence <= all_taken)) {
      history.pop_front();
    }
  }

  // Whether `n` more snapshots leave every follower's next one in the ring.
  bool RoomFor(std::size_t n) const REQUIRES(mu) {
    for (const auto& [id, f] : followers) {
      if (sequence + n - f.taken > Ring()) return false;
    }
    return true;
  }
  // A recording held back by a follower resumes once half the ring is free,
  // not at every snapshot taken: fewer thread switches.
  std::size_t Resume() const { return std::max<std::size_t>(Ring() / 2, 1); }
};

}  // namespace gpuwatch
