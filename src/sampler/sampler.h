// Sampler: the one owner of the backend. On its own thread it reads each field
// at its cadence (static once, slow every 10 s, costly every 5 s, the rest every
// interval), attributes processes, and publishes immutable snapshots. A
// watchdog republishes the last snapshot marked stale when a driver call hangs,
// so readers keep answering. Every public method is thread-safe.
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
  // A sample still running after this long is hung. 0: max(2 s, 5 intervals).
  std::chrono::milliseconds hang_after{0};
  std::size_t history = 600;  // snapshots kept in memory (a ring)
};

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
  // The ring of recent snapshots, oldest first.
  std::vector<std::shared_ptr<const Snapshot>> History() const;
  bool hung() const;
  // Sampling ended on its own (a recording played to its end) or was stopped.
  bool finished() const;

  struct State;  // shared with the sampling and watchdog threads

 private:
  std::shared_ptr<State> state_;
};

}  // namespace gpuwatch
