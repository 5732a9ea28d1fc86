#include "engine/signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "core/driver_calls.h"

namespace gpuwatch::engine {
namespace {

constexpr auto kExitGrace = std::chrono::seconds(3);

volatile std::sig_atomic_t g_signal = 0;  // written by the handler only
int g_guard_pipe[2] = {-1, -1};           // the handler writes the signal's number here

extern "C" void RecordSignal(int signal) {
  g_signal = signal;
  if (g_guard_pipe[1] >= 0) {
    const unsigned char n = static_cast<unsigned char>(signal);
    (void)!write(g_guard_pipe[1], &n, 1);
  }
}

// Waits for a signal; then, kExitGrace later, ends the process if a driver
// call older than the signal is still in flight.
void Guard() {
  for (;;) {
    unsigned char n = 0;
    if (read(g_guard_pipe[0], &n, 1) != 1) continue;
    if (n != SIGINT && n != SIGTERM) continue;
    const auto signalled = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(kExitGrace);
    const auto call = OldestDriverCall();
    if (!call || call->since > signalled) continue;
    const auto age = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::steady_clock::now() - call->since);
    std::fprintf(stderr,
                 "gpuwatch: %s has not returned for %lld s (a hung driver?): exiting without "
                 "waiting for it\n",
                 call->what.c_str(), static_cast<long long>(age.count()));
    std::fflush(stderr);
    _exit(128 + n);
  }
}

}  // namespace

void CatchSignals(std::initializer_list<int> signals, bool exit_guard) {
  if (exit_guard && g_guard_pipe[0] < 0 && pipe2(g_guard_pipe, O_CLOEXEC | O_NONBLOCK) == 0) {
    // The reader blocks; only the handler's end must never block.
    fcntl(g_guard_pipe[0], F_SETFL, fcntl(g_guard_pipe[0], F_GETFL) & ~O_NONBLOCK);
    std::thread(Guard).detach();
  }
  for (int s : signals) std::signal(s, RecordSignal);
}

int TakeSignal() {
  const int s = g_signal;
  g_signal = 0;
  return s;
}

int PendingSignal() { return g_signal; }

}  // namespace gpuwatch::engine
