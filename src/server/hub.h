// Hub: the state the HTTP side serves, published by the daemon's analysis
// loop after each snapshot. HTTP handlers only read it (a scrape never calls
// NVML); streams wait on it. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "export/api_documents.h"
#include "export/prometheus.h"

namespace gpuwatch::server {

class Hub {
 public:
  // Keeps the newest `max_events` events and, apart, the newest `max_marks`
  // marks (which any local job may send): marks never push out an alert, a
  // leak, a diagnosis or any other event.
  explicit Hub(std::size_t max_events = 5000, std::size_t max_marks = 1000)
      : max_events_(max_events), max_marks_(max_marks) {}

  // A new snapshot with the analysis state beside it, and the events it caused.
  void Publish(std::shared_ptr<const Snapshot> snapshot, std::vector<rules::ActiveAlert> alerts,
               std::vector<leaks::LeakReport> leaks, const std::vector<Event>& events,
               std::vector<ProcessFrameworkMemory> framework = {},
               std::vector<Preallocation> preallocated = {},
               std::vector<StandingDiagnosis> diagnoses = {});
  // Why the daemon cannot serve fresh data ("" when it can).
  void SetNotReady(std::string why);
  void Stop();  // wakes every waiting stream; they end
  void Wake();  // wakes every waiting stream (a server stopping checks its own flag)

  // The newest publication, immutable: a scrape holds it without copying.
  std::shared_ptr<const Published> Latest() const;
  std::string NotReady() const;
  bool stopped() const;

  // Events: each has a sequence number (1, 2, ...), marks included; the hub
  // keeps the newest of each ring. Both answers hold both kinds in sequence
  // (time) order.
  std::uint64_t event_count() const;
  // Sequence > count; `newest` (when given) gets the sequence of the newest
  // event under the same lock, so a reader that goes on from it misses none.
  std::vector<Event> EventsAfter(std::uint64_t count, std::uint64_t* newest = nullptr) const;
  // The same, each with its sequence number (the SSE stream's `id:`).
  struct SequencedEvent {
    std::uint64_t sequence = 0;
    Event event;
  };
  std::vector<SequencedEvent> SequencedEventsAfter(std::uint64_t count,
                                                   std::uint64_t* newest = nullptr) const;
  // The newest `limit` kept from `since` on; when more are kept, the other
  // events come before marks, so a flood of marks never hides an alert.
  std::vector<Event> EventsSince(std::chrono::system_clock::time_point since,
                                 std::size_t limit) const;

  // Waits until a publication newer than `version` or an event beyond
  // `events`, Stop(), or `timeout`. True unless it timed out.
  bool Wait(std::uint64_t version, std::uint64_t events, std::chrono::milliseconds timeout) const;

  // The exporter's own counters.
  void CountScrape();
  // Failed NVML calls by call; the next publication carries the counts.
  void CountErrors(const std::map<std::string, std::uint64_t>& by_call);
  ExporterStats Stats() const;

 private:
  struct Numbered {
    std::uint64_t sequence = 0;
    Event event;
  };
  std::size_t max_events_;
  std::size_t max_marks_;
  mutable Mutex mu_;
  mutable CondVar changed_;
  std::shared_ptr<const Published> latest_ = std::make_shared<const Published>();  // never null
  std::string not_ready_ = "starting";
  bool stopped_ = false;
  std::uint64_t wakes_ = 0;
  std::deque<Numbered> events_ GUARDED_BY(mu_);    // every kind but marks, by sequence
  std::deque<Numbered> marks_ GUARDED_BY(mu_);     // marks, by sequence
  std::uint64_t event_count_ GUARDED_BY(mu_) = 0;  // sequence of the newest event
  ExporterStats stats_ GUARDED_BY(mu_);
  std::map<std::string, std::uint64_t> nvml_errors_ GUARDED_BY(mu_);  // by call, from 0
};

// NVML calls that failed in a snapshot (readings missing for a reason other
// than "not supported" / "not yet sampled"), by call: the detail's
// "nvmlDeviceGetX: ..." prefix, or the field key. A call counts once per GPU,
// however many fields it fills.
std::map<std::string, std::uint64_t> FailedCalls(const Snapshot& snapshot);

}  // namespace gpuwatch::server
