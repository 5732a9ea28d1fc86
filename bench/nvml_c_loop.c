/* The reference for bench/sample_bench: a plain C loop over the NVML calls of
 * one full device sample (the interval-cadence fields, the driver's power and
 * utilization sample buffers from the last timestamp seen, XID events drained
 * from an event set, the process list and per-process utilization), resolved
 * with dlopen like gpuwatch does.
 * Usage: nvml_c_loop ITERATIONS [all|ok] [PERIOD_MS]
 *   default: only the calls that succeed on this GPU (what gpuwatch makes
 *            once unsupported calls are cached);  "all": every call, always.
 *   PERIOD_MS > 0: sample every GPU once per period, ITERATIONS times (the
 *            reference for a monitor's steady cost, bench/watch_cost.sh). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_c_types.h"

#define SYM(name) static ret_t (*name)();
SYM(nvmlInit_v2) SYM(nvmlDeviceGetHandleByIndex_v2) SYM(nvmlDeviceGetMemoryInfo_v2)
SYM(nvmlDeviceGetUtilizationRates) SYM(nvmlDeviceGetEncoderUtilization) SYM(nvmlDeviceGetDecoderUtilization)
SYM(nvmlDeviceGetTemperature) SYM(nvmlDeviceGetFieldValues) SYM(nvmlDeviceGetPowerUsage)
SYM(nvmlDeviceGetClockInfo) SYM(nvmlDeviceGetPerformanceState) SYM(nvmlDeviceGetCurrentClocksEventReasons)
SYM(nvmlDeviceGetFanSpeed) SYM(nvmlDeviceGetBAR1MemoryInfo) SYM(nvmlDeviceGetComputeRunningProcesses_v3)
SYM(nvmlDeviceGetGraphicsRunningProcesses_v3) SYM(nvmlDeviceGetProcessUtilization)
SYM(nvmlDeviceGetSamples) SYM(nvmlEventSetCreate) SYM(nvmlDeviceRegisterEvents) SYM(nvmlEventSetWait_v2)

enum { kCalls = 19 };
static void* events;  /* the XID event set of every device sampled */
static unsigned long long last_seen[64][2];  /* per device: power, utilization */
static unsigned current;  /* the device being sampled */
static int no_streams;  /* GPUWATCH_C_LOOP_NO_STREAMS: leave out the three stream calls */

/* New samples of `type` since the last seen; "no new sample" (NOT_FOUND, 6) counts as an answer. */
static ret_t buffer(dev_t_ d, int type) {
  smp_t s[256]; unsigned n = 256; int vt = 0;
  unsigned long long* seen = &last_seen[current % 64][type];
  ret_t rc = nvmlDeviceGetSamples(d, type, *seen, &vt, &n, s);
  if (rc == 0) { for (unsigned k = 0; k < n; ++k) if (s[k].ts > *seen) *seen = s[k].ts; }
  return rc == 6 ? 0 : rc;
}

/* Drains XID events without waiting; "nothing" (TIMEOUT, 10) is an answer. */
static ret_t drain(void) {
  evt_t e; ret_t rc;
  if (!events) return 3;
  while ((rc = nvmlEventSetWait_v2(events, &e, 0)) == 0) {}
  return rc == 10 ? 0 : rc;
}
static int ok_call[kCalls];

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static unsigned long long wall_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (unsigned long long)t.tv_sec * 1000000ull + (unsigned long long)t.tv_nsec / 1000ull;
}

/* One full sample; returns how many calls succeeded. */
static int sample(dev_t_ d, int only_ok, int probe) {
  mem2_t m; util_t u; bar1_t b; unsigned v, p; unsigned long long r; int ps;
  fv_t fv[3]; proc_t procs[64]; putil_t pu[256]; unsigned n; int rc[kCalls]; int i = 0, good = 0;
  memset(fv, 0, sizeof fv); fv[0].fieldId = 82; fv[1].fieldId = 186; fv[2].fieldId = 185;
#define CALL(expr) do { if (!only_ok || ok_call[i]) rc[i] = (expr); else rc[i] = -1; if (probe) ok_call[i] = rc[i] == 0; good += rc[i] == 0; i++; } while (0)
  m.version = (unsigned)(sizeof(mem2_t) | (2u << 24));
  CALL(nvmlDeviceGetMemoryInfo_v2(d, &m));
  CALL(nvmlDeviceGetUtilizationRates(d, &u));
  CALL(nvmlDeviceGetEncoderUtilization(d, &v, &p));
  CALL(nvmlDeviceGetDecoderUtilization(d, &v, &p));
  CALL(nvmlDeviceGetTemperature(d, 0, &v));
  CALL(nvmlDeviceGetFieldValues(d, 3, fv));
  CALL(nvmlDeviceGetPowerUsage(d, &v));
  CALL(nvmlDeviceGetClockInfo(d, 0, &v));
  CALL(nvmlDeviceGetClockInfo(d, 1, &v));
  CALL(nvmlDeviceGetClockInfo(d, 2, &v));
  CALL(nvmlDeviceGetPerformanceState(d, &ps));
  CALL(nvmlDeviceGetCurrentClocksEventReasons(d, &r));
  CALL(nvmlDeviceGetFanSpeed(d, &v));
  CALL(nvmlDeviceGetBAR1MemoryInfo(d, &b));
  if (!no_streams) {
    CALL(buffer(d, 0));
    CALL(buffer(d, 1));
    CALL(drain());
  }
  n = 64; CALL(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, procs));
  n = 64; CALL(nvmlDeviceGetGraphicsRunningProcesses_v3(d, &n, procs));
  n = 256; (void)nvmlDeviceGetProcessUtilization(d, pu, &n, wall_us() - 10000000ull);
  return good;
}

int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 1000;
  int only_ok = !(argc > 2 && strcmp(argv[2], "all") == 0);
  no_streams = getenv("GPUWATCH_C_LOOP_NO_STREAMS") != NULL;
  const char* path = getenv("GPUWATCH_NVML_LIBRARY");
  void* h = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW);
  if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
#define LOAD(name) name = (ret_t (*)())dlsym(h, #name); if (!name) { fprintf(stderr, "missing %s\n", #name); return 1; }
  LOAD(nvmlInit_v2) LOAD(nvmlDeviceGetHandleByIndex_v2) LOAD(nvmlDeviceGetMemoryInfo_v2)
  LOAD(nvmlDeviceGetUtilizationRates) LOAD(nvmlDeviceGetEncoderUtilization) LOAD(nvmlDeviceGetDecoderUtilization)
  LOAD(nvmlDeviceGetTemperature) LOAD(nvmlDeviceGetFieldValues) LOAD(nvmlDeviceGetPowerUsage)
  LOAD(nvmlDeviceGetClockInfo) LOAD(nvmlDeviceGetPerformanceState) LOAD(nvmlDeviceGetCurrentClocksEventReasons)
  LOAD(nvmlDeviceGetFanSpeed) LOAD(nvmlDeviceGetBAR1MemoryInfo) LOAD(nvmlDeviceGetComputeRunningProcesses_v3)
  LOAD(nvmlDeviceGetGraphicsRunningProcesses_v3) LOAD(nvmlDeviceGetProcessUtilization)
  LOAD(nvmlDeviceGetSamples) LOAD(nvmlEventSetCreate) LOAD(nvmlDeviceRegisterEvents) LOAD(nvmlEventSetWait_v2)
  double ti = now_us();
  if (nvmlInit_v2() != 0) { fprintf(stderr, "nvmlInit_v2 failed\n"); return 1; }
  printf("nvmlInit_v2 ms=%.2f\n", (now_us() - ti) / 1e3);
  dev_t_ d;
  if (nvmlDeviceGetHandleByIndex_v2(0, &d) != 0) { fprintf(stderr, "no device 0\n"); return 1; }
  if (nvmlEventSetCreate(&events) != 0 || nvmlDeviceRegisterEvents(d, 0x8ull, events) != 0) events = NULL;
  int period_ms = argc > 3 ? atoi(argv[3]) : 0;
  if (period_ms > 0) {
    static ret_t (*count_fn)();
    count_fn = (ret_t (*)())dlsym(h, "nvmlDeviceGetCount_v2");
    unsigned int count = 1;
    if (count_fn) count_fn(&count);
    for (unsigned int i = 1; i < count && events; ++i) {
      if (nvmlDeviceGetHandleByIndex_v2(i, &d) == 0) nvmlDeviceRegisterEvents(d, 0x8ull, events);
    }
    /* Which calls GPU 0 answers (only those are made with "ok"), as gpuwatch learns by caching. */
    if (nvmlDeviceGetHandleByIndex_v2(0, &d) == 0) sample(d, 0, 1);
    for (int k = 0; k < iters; ++k) {
      double start = now_us();
      for (unsigned int i = 0; i < count; ++i) {
        current = i;
        if (nvmlDeviceGetHandleByIndex_v2(i, &d) == 0) sample(d, only_ok, 0);
      }
      double left_us = period_ms * 1e3 - (now_us() - start);
      if (left_us > 0) {
        struct timespec ts = {(time_t)(left_us / 1e6), (long)((long long)left_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
      }
    }
    printf("c_loop_periodic devices=%u period_ms=%d iterations=%d\n", count, period_ms, iters);
    return 0;
  }
  int good = sample(d, 0, 1);
  for (int w = 0; w < 20; ++w) sample(d, only_ok, 0);
  double t0 = now_us();
  for (int k = 0; k < iters; ++k) sample(d, only_ok, 0);
  double per = (now_us() - t0) / iters;
  printf("c_loop%s%s us_per_sample=%.2f calls_ok=%d/%d iterations=%d\n", only_ok ? "" : "_all",
         no_streams ? "_no_streams" : "", per, good, no_streams ? kCalls - 3 : kCalls, iters);
  return 0;
}
