// A process-lifetime object that is never destroyed (after leveldb's
// NoDestructor). The fake library keeps its state in one: a call may still be
// sleeping in a `hang` fault on another thread while the process exits, and
// must not wake up to a destroyed mutex.
#pragma once

#include <new>
#include <utility>

namespace gpuwatch::fake_nvml {

template <typename T>
class NoDestructor {
 public:
  template <typename... Args>
  explicit NoDestructor(Args&&... args) {
    new (storage_) T(std::forward<Args>(args)...);
  }
  NoDestructor(const NoDestructor&) = delete;
  NoDestructor& operator=(const NoDestructor&) = delete;

  T* get() { return std::launder(reinterpret_cast<T*>(storage_)); }

 private:
  alignas(T) unsigned char storage_[sizeof(T)];
};

}  // namespace gpuwatch::fake_nvml
