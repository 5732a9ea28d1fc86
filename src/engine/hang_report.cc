#include "engine/hang_report.h"

#include <iostream>
#include <optional>
#include <string>

#include "core/driver_calls.h"
#include "core/thread_name.h"

namespace gpuwatch::engine {

HangReport::HangReport(std::chrono::milliseconds after) {
  thread_ = std::thread([this, after] {
    NameThisThread("gw-hang-report");
    std::optional<std::chrono::steady_clock::time_point> reported;  // the call said last
    MutexLock lock(mu_);
    while (!cv_.WaitFor(lock, std::chrono::milliseconds(250),
                        [this]() REQUIRES(mu_) { return done_; })) {
      const auto call = OldestDriverCall();
      if (!call || call->since == reported) continue;
      if (std::chrono::steady_clock::now() - call->since < after) continue;
      reported = call->since;
      if (auto what = DescribeHungCall(after)) {
        std::cerr << "gpuwatch: warning: " << *what
                  << " (a hung driver?); still waiting, Ctrl-C to stop\n"
                  << std::flush;
      }
    }
  });
}

HangReport::~HangReport() {
  {
    MutexLock lock(mu_);
    done_ = true;
  }
  cv_.NotifyAll();
  thread_.join();
}

}  // namespace gpuwatch::engine
