// Sampler: the one owner of the backend. On its own thread it reads each field
// at its cadence (static once, slow every 10 s, costly every 5 s, the rest every
// interval), attributes processes, and publishes immutable snapshots. Live
// GPUs are read off this thread (DeviceReaders: one reader, another for the
// GPUs waiting behind a slow call): a GPU whose driver call has not returned
// by the hang limit keeps its last values, marked stale
// (DeviceHealth::kStale), while the others go on. When every GPU is in such a
// call, or the sampling thread itself is stuck (a watchdog looks), the last
// snapshot is republished once marked stale, so readers keep answering.
//
// A backend that keeps its own clock (a recording, Backend::NextSampleDue)
// is read when its next sample is due instead of at the interval, every
// field each time, and without the watchdog; and the sampler waits for its
// followers, so each recorded sample reaches each follower exactly once.
//
// Two kinds of readers: Latest() / WaitNewer() give the newest snapshot
// (HTTP, TUI: a slow reader skips what it missed); a Follower takes every
// snapshot in order (the pipeline that analyses and records them).
// Every public method is thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpuwatch/backend.h"
#include "gpuwatch/snapshot.h"
#include "host/process_resolver.h"

namespace gpuwatch {

struct SamplerOptions {
  std::chrono::milliseconds interval{1000};  // down to 10 ms
  std::chrono::milliseconds slow_period{10'000};
  std::chrono::milliseconds costly_period{5'000};
  // The driver's sample buffers (Cadence::kBuffers): at most this often.
  std::chrono::milliseconds buffers_period{1'000};
  bool processes = true;
  // The fields asked of the driver, each at its cadence; the others are never
  // read and stay absent. A consumer that shows or judges only some fields
  // asks for those (top: what its views draw and its pipeline judges,
  // tui/feed.cc): fewer driver calls.
  FieldMask fields = AllFields();
  // A GPU's read still running after this long is hung. 0: max(2 s, 5 intervals).
  std::chrono::milliseconds hang_after{0};
  // Snapshots kept in memory for followers (a ring): how far a follower may
  // fall behind live GPUs before it skips, and how far a recording may run
  // ahead of its slowest follower. 0: RingSize()'s default. The ring holds
  // only what some follower has yet to take, and the newest: followers that
  // keep up cost one snapshot. What is needed later is kept as numbers by
  // whoever needs it (the daemon's FieldHistory).
  std::size_t history = 0;
};

// The ring's size: `history`, or 30 s of samples at the interval, at least 16
// and at most 600 (a follower may lag 30 s at 1 Hz, 6 s at 10 ms).
std::size_t RingSize(const SamplerOptions& options);

class Sampler {
 public:
  Sampler(std::unique_ptr<Backend> backend, std::unique_ptr<host::ProcessResolver> resolver,
          SamplerOptions options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  void Start();
  // Stops sampling. Waits up to `grace` for a sample in progress; a thread stuck
  // in a hung driver call is left behind rather than blocking shutdown.
  void Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

  // The newest snapshot (nullptr before the first one).
  std::shared_ptr<const Snapshot> Latest() const;
  // Waits until a snapshot with sequence > `after` exists, or `timeout`, or
  // Stop(). Returns it, or nullptr.
  std::shared_ptr<const Snapshot> WaitNewer(std::uint64_t after,
                                            std::chrono::milliseconds timeout) const;
  // The ring, oldest first: the snapshots some follower has yet to take, and
  // the newest.
  std::vector<std::shared_ptr<const Snapshot>> History() const;

  // A reader that takes every snapshot, in order. Made by Follow(); used by
  // one thread at a time; may outlive the Sampler.
  class Follower;
  // A follower that starts at the oldest snapshot still in the ring (the
  // first one when called before Start(); after, the oldest another follower
  // has yet to take, or the newest). With a recording the sampler
  // never runs more than `history` snapshots ahead of any follower, so none
  // is ever skipped. With live GPUs the sampler never waits: a follower that
  // falls more than `history` behind skips the snapshots that left the ring
  // and counts them in missed().
  std::unique_ptr<Follower> Follow();

  // Every GPU is in a hung call, or the sampling thread is.
  bool hung() const;
  // Sampling ended on its own (a recording played to its end) or was stopped.
  bool finished() const;

  struct State;  // shared with the sampling and watchdog threads and followers

 private:
  std::shared_ptr<State> state_;
};

class Sampler::Follower {
 public:
  ~Follower();  // the sampler no longer waits for this one
  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;

  // The snapshot after the last one taken, waiting up to `timeout` or
  // Stop(); nullptr on timeout, and at once when done().
  std::shared_ptr<const Snapshot> Next(std::chrono::milliseconds timeout);
  // Sampling has ended (a recording played to its end, or Stop()) and every
  // snapshot published has been taken or missed.
  bool done() const;
  // Snapshots that left the ring before this follower took them (live GPUs
  // only; 0 with a recording).
  std::uint64_t missed() const;

 private:
  friend class Sampler;
  Follower(std::shared_ptr<State> state, std::uint64_t id) : state_(std::move(state)), id_(id) {}

  const std::shared_ptr<State> state_;
  const std::uint64_t id_;
};

}  // namespace gpuwatch
