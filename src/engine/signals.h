// The signals a long-running command reacts to. The handler only records the
// last signal (async-signal-safe); the command's loop asks for it. The one
// flag is process-wide by nature: signals are.
//
// A driver call that never returns must not make a command unkillable: with
// the exit guard, a command still running 3 s after SIGINT or SIGTERM while
// a driver call that began before the signal is still in flight
// (core/driver_calls.h) says so and exits (128 + the signal) without waiting
// for it. Work that is not a driver call (flushing the history) is never cut.
// The guard is an alarm, not a thread: the signal starts it, and SIGALRM's
// handler reads the lock-free table of calls in flight.
#pragma once

#include <initializer_list>

namespace gpuwatch::engine {

// Routes `signals` to the recorder (default: SIGINT and SIGTERM), and arms
// the exit guard unless `exit_guard` is false (`run`, which waits for its
// job after forwarding the signal, and must not leave it behind).
void CatchSignals(std::initializer_list<int> signals = {2 /*SIGINT*/, 15 /*SIGTERM*/},
                  bool exit_guard = true);
// The last signal caught since the previous call, 0 if none; clears it.
int TakeSignal();
// The last signal caught, 0 if none, without clearing it.
int PendingSignal();

}  // namespace gpuwatch::engine
