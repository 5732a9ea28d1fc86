// Whole lines to a stream from several threads (the command's loop and the
// alert actions' worker) without interleaving them.
#pragma once

#include <ostream>
#include <string_view>

#include "core/mutex.h"

namespace gpuwatch::cli {

class Terminal {
 public:
  explicit Terminal(std::ostream& out, std::string_view prefix = "") : out_(out), prefix_(prefix) {}
  void Line(std::string_view text) {
    MutexLock lock(mu_);
    out_ << prefix_ << text << '\n' << std::flush;
  }

 private:
  Mutex mu_;
  std::ostream& out_ GUARDED_BY(mu_);
  const std::string_view prefix_;
};

}  // namespace gpuwatch::cli
