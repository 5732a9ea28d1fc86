#include "server/hub.h"

#include <algorithm>
#include <set>
#include <utility>

#include "core/mutex.h"

namespace gpuwatch::server {

void Hub::Publish(std::shared_ptr<const Snapshot> snapshot, std::vector<rules::ActiveAlert> alerts,
                  std::vector<leaks::LeakReport> leaks, const std::vector<Event>& events,
                  std::vector<ProcessFrameworkMemory> framework,
                  std::vector<Preallocation> preallocated,
                  std::vector<StandingDiagnosis> diagnoses) {
  auto next = std::make_shared<Published>();
  next->snapshot = std::move(snapshot);
  next->alerts = std::move(alerts);
  next->leaks = std::move(leaks);
  next->framework = std::move(framework);
  next->preallocated = std::move(preallocated);
  next->diagnoses = std::move(diagnoses);
  std::shared_ptr<const Published> previous;  // released after the lock
  {
    MutexLock lock(mu_);
    next->version = latest_->version + 1;
    next->nvml_errors = nvml_errors_;
    previous = std::exchange(latest_, std::move(next));
    for (const auto& e : events) {
      const bool mark = e.kind == Event::Kind::kMark;
      auto& ring = mark ? marks_ : events_;
      ring.push_back({++event_count_, e});
      if (ring.size() > (mark ? max_marks_ : max_events_)) ring.pop_front();
    }
    not_ready_.clear();
  }
  changed_.NotifyAll();
}

void Hub::SetNotReady(std::string why) {
  MutexLock lock(mu_);
  not_ready_ = std::move(why);
}

void Hub::Stop() {
  {
    MutexLock lock(mu_);
    stopped_ = true;
  }
  changed_.NotifyAll();
}

void Hub::Wake() {
  {
    MutexLock lock(mu_);
    ++wakes_;
  }
  changed_.NotifyAll();
}

std::shared_ptr<const Published> Hub::Latest() const {
  MutexLock lock(mu_);
  return latest_;
}

std::string Hub::NotReady() const {
  MutexLock lock(mu_);
  return not_ready_;
}

bool Hub::stopped() const {
  MutexLock lock(mu_);
  return stopped_;
}

std::uint64_t Hub::event_count() const {
  MutexLock lock(mu_);
  return event_count_;
}

std::vector<Event> Hub::EventsAfter(std::uint64_t count, std::uint64_t* newest) const {
  std::vector<Event> out;
  for (SequencedEvent& s : SequencedEventsAfter(count, newest)) out.push_back(std::move(s.event));
  return out;
}

std::vector<Hub::SequencedEvent> Hub::SequencedEventsAfter(std::uint64_t count,
                                                           std::uint64_t* newest) const {
  MutexLock lock(mu_);
  if (newest != nullptr) *newest = event_count_;
  const auto after = [count](const Numbered& n) { return n.sequence <= count; };
  auto e = std::partition_point(events_.begin(), events_.end(), after);
  auto m = std::partition_point(marks_.begin(), marks_.end(), after);
  std::vector<SequencedEvent> out;
  out.reserve(static_cast<std::size_t>((events_.end() - e) + (marks_.end() - m)));
  while (e != events_.end() || m != marks_.end()) {
    const bool take_event = m == marks_.end() || (e != events_.end() && e->sequence < m->sequence);
    const Numbered& n = take_event ? *e++ : *m++;
    out.push_back({n.sequence, n.event});
  }
  return out;
}

std::vector<Event> Hub::EventsSince(std::chrono::system_clock::time_point since,
                                    std::size_t limit) const {
  MutexLock lock(mu_);
  std::vector<const Numbered*> picked;
  for (const auto* ring : {&events_, &marks_}) {  // the other events first, then marks
    for (auto it = ring->rbegin(); it != ring->rend() && picked.size() < limit; ++it) {
      if (it->event.time >= since) picked.push_back(&*it);
    }
  }
  std::sort(picked.begin(), picked.end(),
            [](const Numbered* a, const Numbered* b) { return a->sequence < b->sequence; });
  std::vector<Event> out;
  out.reserve(picked.size());
  for (const Numbered* n : picked) out.push_back(n->event);  // newest last
  return out;
}

bool Hub::Wait(std::uint64_t version, std::uint64_t events,
               std::chrono::milliseconds timeout) const {
  MutexLock lock(mu_);
  const std::uint64_t wakes = wakes_;
  return changed_.WaitFor(lock, timeout, [&]() REQUIRES(mu_) {
    return stopped_ || wakes_ != wakes || latest_->version > version || event_count_ > events;
  });
}

void Hub::CountScrape() {
  MutexLock lock(mu_);
  ++stats_.scrapes;
}

void Hub::CountErrors(const std::map<std::string, std::uint64_t>& by_call) {
  MutexLock lock(mu_);
  for (const auto& [call, n] : by_call) nvml_errors_[call] += n;
}

ExporterStats Hub::Stats() const {
  MutexLock lock(mu_);
  ExporterStats s = stats_;
  if (latest_->snapshot) {
    s.last_sample_age_seconds =
        std::chrono::duration<double>(std::chrono::system_clock::now() - latest_->snapshot->time)
            .count();
    s.sampler_hung = latest_->snapshot->stale;
  }
  return s;
}

std::map<std::string, std::uint64_t> FailedCalls(const Snapshot& snapshot) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& d : snapshot.devices) {
    std::set<std::string> failed;  // this GPU's
    for (const auto& f : Catalogue()) {
      if (f.scope != Scope::kDevice) continue;
      const Reading& r = d.fields[f.id];
      if (r.ok() || (r.missing() != Missing::kFailed && r.missing() != Missing::kDeviceLost)) {
        continue;
      }
      const std::string& detail = r.detail();
      const auto colon = detail.find(':');
      failed.insert(detail.starts_with("nvml") && colon != std::string::npos
                        ? detail.substr(0, colon)
                        : std::string(f.key));
    }
    for (const auto& call : failed) ++out[call];
  }
  return out;
}

}  // namespace gpuwatch::server
