// The signals a long-running command reacts to. The handler only records the
// last signal (async-signal-safe); the command's loop asks for it. The one
// flag is process-wide by nature: signals are.
#pragma once

#include <initializer_list>

namespace gpuwatch::cli {

// Routes `signals` to the recorder (default: SIGINT and SIGTERM).
void CatchSignals(std::initializer_list<int> signals = {2 /*SIGINT*/, 15 /*SIGTERM*/});
// The last signal caught since the previous call, 0 if none; clears it.
int TakeSignal();
// Whether a signal was caught (without clearing it).
bool SignalPending();

}  // namespace gpuwatch::cli
