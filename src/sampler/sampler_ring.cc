// The reading side of the Sampler: the newest snapshot, the ring and the
// followers that take every snapshot in order.
#include <algorithm>

#include "sampler/sampler.h"
#include "sampler/sampler_state.h"

namespace gpuwatch {

std::size_t RingSize(const SamplerOptions& options) {
  if (options.history > 0) return options.history;
  const auto interval = std::max<std::int64_t>(options.interval.count(), 1);
  return std::clamp<std::size_t>(static_cast<std::size_t>(30'000 / interval), 16, 600);
}

std::shared_ptr<const Snapshot> Sampler::Latest() const {
  MutexLock lock(state_->mu);
  return state_->latest;
}

std::shared_ptr<const Snapshot> Sampler::WaitNewer(std::uint64_t after,
                                                   std::chrono::milliseconds timeout) const {
  MutexLock lock(state_->mu);
  state_->cv.WaitFor(lock, timeout, [&]() REQUIRES(state_->mu) {
    return state_->stopping || (state_->latest && state_->latest->sequence > after);
  });
  if (state_->latest && state_->latest->sequence > after) return state_->latest;
  return nullptr;
}

std::vector<std::shared_ptr<const Snapshot>> Sampler::History() const {
  MutexLock lock(state_->mu);
  return {state_->history.begin(), state_->history.end()};
}

std::unique_ptr<Sampler::Follower> Sampler::Follow() {
  MutexLock lock(state_->mu);
  const std::uint64_t id = state_->next_follower++;
  State::FollowerState f;
  f.taken = state_->history.empty() ? state_->sequence : state_->history.front()->sequence - 1;
  state_->followers.emplace(id, f);
  return std::unique_ptr<Follower>(new Follower(state_, id));
}

Sampler::Follower::~Follower() {
  MutexLock lock(state_->mu);
  state_->followers.erase(id_);
  state_->cv.NotifyAll();  // the sampler may be waiting for this one
}

std::shared_ptr<const Snapshot> Sampler::Follower::Next(std::chrono::milliseconds timeout) {
  State& st = *state_;
  MutexLock lock(st.mu);
  State::FollowerState& f = st.followers.at(id_);
  const auto ready = [&]() REQUIRES(st.mu) { return st.sequence > f.taken; };
  st.cv.WaitFor(lock, timeout,
                [&]() REQUIRES(st.mu) { return ready() || st.stopping || st.finished; });
  if (!ready()) return nullptr;
  const std::uint64_t oldest = st.history.front()->sequence;
  if (f.taken + 1 < oldest) {  // live GPUs only: the ring moved on without this follower
    f.missed += oldest - (f.taken + 1);
    f.taken = oldest - 1;
  }
  std::shared_ptr<const Snapshot> snap = st.history[f.taken + 1 - oldest];
  f.taken = snap->sequence;
  st.Trim();
  if (st.waiting_for_room && st.RoomFor(st.Resume())) st.cv.NotifyAll();
  return snap;
}

bool Sampler::Follower::done() const {
  MutexLock lock(state_->mu);
  return state_->finished && state_->followers.at(id_).taken == state_->sequence;
}

std::uint64_t Sampler::Follower::missed() const {
  MutexLock lock(state_->mu);
  return state_->followers.at(id_).missed;
}

}  // namespace gpuwatch
