/* The NVML types the C benches pass (bench/nvml_c_loop.c,
 * bench/nvml_call_memory.c), laid out as nvml.h declares them, for calls
 * resolved with dlopen without NVML's header. */
#ifndef GPUWATCH_BENCH_NVML_C_TYPES_H
#define GPUWATCH_BENCH_NVML_C_TYPES_H

/* clang-format off */
typedef int ret_t;
typedef void* dev_t_;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } mem2_t;
typedef struct { unsigned int gpu, memory; } util_t;
typedef struct { unsigned long long total, free, used; } bar1_t;
typedef struct { unsigned int pid; unsigned long long used; unsigned int gi, ci; } proc_t;
typedef struct { unsigned int pid; unsigned long long ts; unsigned int sm, mem, enc, dec; } putil_t;
typedef struct { unsigned int fieldId, scopeId; long long timestamp, latencyUsec; int valueType; ret_t ret; unsigned long long value; } fv_t;
typedef struct { unsigned long long ts, value; } smp_t;
typedef struct { void* device; unsigned long long type, data; unsigned int gi, ci; } evt_t;
/* clang-format on */

#endif
