// A mutex clang's thread-safety analysis checks (-Wthread-safety, an error in
// the clang build): a member declared GUARDED_BY(mu_) may be read or written
// only while mu_ is held, a function marked REQUIRES(mu_) only called with it
// held. Under GCC the annotations are empty and these are plain std types.
//
//   Mutex mu_;
//   int count_ GUARDED_BY(mu_) = 0;
//   { MutexLock lock(mu_); ++count_; cv_.NotifyAll(); }
//   MutexLock lock(mu_);
//   cv_.Wait(lock, [&]() REQUIRES(mu_) { return count_ > 0; });
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <utility>

#if defined(__clang__)
#define GPUWATCH_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define GPUWATCH_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) GPUWATCH_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY GPUWATCH_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) GPUWATCH_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) GPUWATCH_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) GPUWATCH_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) GPUWATCH_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) GPUWATCH_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define EXCLUDES(...) GPUWATCH_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

namespace gpuwatch {

class CAPABILITY("mutex") Mutex {
 public:
  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex from construction to destruction, except between Unlock()
// and Lock(), and while a CondVar waits on it.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() { lock_.unlock(); }
  void Lock() ACQUIRE() { lock_.lock(); }

 private:
  template <class Cv>
  friend class BasicCondVar;
  friend class StopCondVar;
  std::unique_lock<std::mutex> lock_;
};

// Condition variables over a MutexLock. A predicate that reads guarded
// members says so: [&]() REQUIRES(mu_) { ... }. Timed waits return ready()
// as it was last seen: false on the timeout. CondVar is std::condition_variable;
// StopCondVar (std::condition_variable_any, dearer) also wakes when a
// std::stop_token is stopped.
template <class Cv>
class BasicCondVar {
 public:
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

  template <class Predicate>
  void Wait(MutexLock& lock, Predicate ready) {
    cv_.wait(lock.lock_, ready);
  }
  template <class Rep, class Period, class Predicate>
  bool WaitFor(MutexLock& lock, const std::chrono::duration<Rep, Period>& timeout,
               Predicate ready) {
    return cv_.wait_for(lock.lock_, timeout, ready);
  }
  template <class Clock, class Duration, class Predicate>
  bool WaitUntil(MutexLock& lock, const std::chrono::time_point<Clock, Duration>& deadline,
                 Predicate ready) {
    return cv_.wait_until(lock.lock_, deadline, ready);
  }
  // Until a notification or the timeout, whichever comes first.
  template <class Rep, class Period>
  void WaitFor(MutexLock& lock, const std::chrono::duration<Rep, Period>& timeout) {
    cv_.wait_for(lock.lock_, timeout);
  }

 protected:
  Cv cv_;
};

using CondVar = BasicCondVar<std::condition_variable>;

class StopCondVar : public BasicCondVar<std::condition_variable_any> {
 public:
  using BasicCondVar::Wait;
  using BasicCondVar::WaitFor;
  using BasicCondVar::WaitUntil;

  template <class Predicate>
  bool Wait(MutexLock& lock, std::stop_token stop, Predicate ready) {
    return cv_.wait(lock.lock_, std::move(stop), ready);
  }
  template <class Rep, class Period, class Predicate>
  bool WaitFor(MutexLock& lock, std::stop_token stop,
               const std::chrono::duration<Rep, Period>& timeout, Predicate ready) {
    return cv_.wait_for(lock.lock_, std::move(stop), timeout, ready);
  }
  template <class Clock, class Duration, class Predicate>
  bool WaitUntil(MutexLock& lock, std::stop_token stop,
                 const std::chrono::time_point<Clock, Duration>& deadline, Predicate ready) {
    return cv_.wait_until(lock.lock_, std::move(stop), deadline, ready);
  }
};

}  // namespace gpuwatch
