#include "cli/signals.h"

#include <csignal>

namespace gpuwatch::cli {
namespace {

volatile std::sig_atomic_t g_signal = 0;  // written by the handler only
extern "C" void RecordSignal(int signal) { g_signal = signal; }

}  // namespace

void CatchSignals(std::initializer_list<int> signals) {
  for (int s : signals) std::signal(s, RecordSignal);
}

int TakeSignal() {
  const int s = g_signal;
  g_signal = 0;
  return s;
}

bool SignalPending() { return g_signal != 0; }

}  // namespace gpuwatch::cli
