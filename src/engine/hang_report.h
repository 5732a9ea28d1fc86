// A one-shot command (status, query, select, doctor) reads the GPUs on its
// main thread: while it lives, a HangReport says on stderr, once per call,
// when a driver call has not returned for `after` ("reading GPU 0 has not
// returned for 10 s (a hung driver?); still waiting, Ctrl-C to stop"), so a
// hang is never silent. The daemon and `watch` say it their own way.
#pragma once

#include <chrono>
#include <thread>

#include "core/mutex.h"

namespace gpuwatch::engine {

class HangReport {
 public:
  explicit HangReport(std::chrono::milliseconds after = std::chrono::seconds(10));
  ~HangReport();
  HangReport(const HangReport&) = delete;
  HangReport& operator=(const HangReport&) = delete;

 private:
  Mutex mu_;
  CondVar cv_;
  bool done_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace gpuwatch::engine
