#include "engine/signals.h"

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>

#include "core/driver_calls.h"

namespace gpuwatch::engine {
namespace {

constexpr unsigned kExitGraceSeconds = 3;

volatile std::sig_atomic_t g_signal = 0;  // written by the handler only
// The exit guard, with no thread of its own: SIGINT or SIGTERM starts a
// kExitGraceSeconds alarm, and SIGALRM's handler ends the process if a driver
// call that began before the signal is still in flight.
std::atomic<bool> g_guarded{false};
std::atomic<bool> g_armed{false};              // an alarm is pending
std::atomic<std::uint64_t> g_signalled_ns{0};  // when the alarm's signal came
std::atomic<int> g_guard_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);

std::uint64_t MonotonicNanos() {  // steady_clock's clock, async-signal-safe
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// Async-signal-safe text: no stdio, no allocation.
void Append(char* out, std::size_t size, std::size_t& used, const char* text) {
  while (*text != '\0' && used + 1 < size) out[used++] = *text++;
  out[used] = '\0';
}
void AppendNumber(char* out, std::size_t size, std::size_t& used, std::uint64_t n) {
  char digits[24];
  std::size_t k = 0;
  do {
    digits[k++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  char text[24];
  for (std::size_t i = 0; i < k; ++i) text[i] = digits[k - 1 - i];
  text[k] = '\0';
  Append(out, size, used, text);
}

extern "C" void ExitIfHung(int) {
  const std::uint64_t signalled = g_signalled_ns.load();
  char what[kDriverCallTextSize];
  const std::uint64_t since = OldestCallSince(signalled, what);
  g_armed.store(false);
  if (since == 0) return;  // nothing of the driver holds the command up
  char line[kDriverCallTextSize + 128];
  std::size_t used = 0;
  Append(line, sizeof line, used, "gpuwatch: ");
  Append(line, sizeof line, used, what);
  Append(line, sizeof line, used, " has not returned for ");
  AppendNumber(line, sizeof line, used, (MonotonicNanos() - since) / 1'000'000'000u);
  Append(line, sizeof line, used, " s (a hung driver?): exiting without waiting for it\n");
  (void)!write(STDERR_FILENO, line, used);
  _exit(128 + g_guard_signal.load());
}

extern "C" void RecordSignal(int signal) {
  g_signal = signal;
  if ((signal == SIGINT || signal == SIGTERM) && g_guarded.load() && !g_armed.exchange(true)) {
    g_signalled_ns.store(MonotonicNanos());
    g_guard_signal.store(signal);
    alarm(kExitGraceSeconds);
  }
}

void Route(int signal, void (*handler)(int)) {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;  // the alarm interrupts no read that can go on
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
}

}  // namespace

void CatchSignals(std::initializer_list<int> signals, bool exit_guard) {
  if (exit_guard && !g_guarded.exchange(true)) Route(SIGALRM, ExitIfHung);
  for (int s : signals) Route(s, RecordSignal);
}

int TakeSignal() {
  const int s = g_signal;
  g_signal = 0;
  return s;
}

int PendingSignal() { return g_signal; }

}  // namespace gpuwatch::engine
