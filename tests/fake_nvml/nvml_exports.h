// Declares every NVML entry point of the fake library from the one symbol
// list, with default visibility (the rest of the library is built hidden), so
// the compiler checks each definition against the list's exact signature.
#pragma once

#include "backends/nvml/nvml_symbols.h"

extern "C" {
#pragma GCC visibility push(default)
GPUWATCH_NVML_SYMBOLS(GPUWATCH_NVML_DECLARE)
#pragma GCC visibility pop
}
