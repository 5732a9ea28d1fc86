/* Does nvmlInitWithFlags(NVML_INIT_FLAG_NO_ATTACH) make a one-shot answer
 * cheaper? One fresh process: load libnvidia-ml, initialise with FLAGS
 * (0: as nvmlInit_v2; 2: NVML_INIT_FLAG_NO_ATTACH, "don't attach GPUs"),
 * take every device handle, then make the first reads a `gpuwatch query` of
 * the common fields makes, each timed, with its return code (a read the flag
 * breaks shows as rc != 0). Exits without nvmlShutdown, as gpuwatch's
 * one-shot commands do. tests/gpu/run_init_flags.sh runs it alternately.
 * Usage: init_flags FLAGS */
#define _POSIX_C_SOURCE 199309L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int rc_t;
typedef void* dev_t_;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

#define LOAD(name, ret, params)                                   \
  typedef ret(*name##_fn) params;                                 \
  name##_fn name = (name##_fn)dlsym(lib, #name);                  \
  if (name == NULL) {                                             \
    fprintf(stderr, "init_flags: no %s in the library\n", #name); \
    return 2;                                                     \
  }

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: init_flags FLAGS\n");
    return 2;
  }
  const unsigned flags = (unsigned)strtoul(argv[1], NULL, 0);
  const double t0 = now_ms();
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "init_flags: %s\n", dlerror());
    return 2;
  }
  LOAD(nvmlInitWithFlags, rc_t, (unsigned));
  LOAD(nvmlDeviceGetCount_v2, rc_t, (unsigned*));
  LOAD(nvmlDeviceGetHandleByIndex_v2, rc_t, (unsigned, dev_t_*));
  LOAD(nvmlDeviceGetName, rc_t, (dev_t_, char*, unsigned));
  LOAD(nvmlDeviceGetMemoryInfo, rc_t, (dev_t_, unsigned long long*));
  LOAD(nvmlDeviceGetUtilizationRates, rc_t, (dev_t_, unsigned*));
  LOAD(nvmlDeviceGetTemperature, rc_t, (dev_t_, int, unsigned*));
  LOAD(nvmlDeviceGetPowerUsage, rc_t, (dev_t_, unsigned*));
  LOAD(nvmlDeviceGetEnforcedPowerLimit, rc_t, (dev_t_, unsigned*));
  LOAD(nvmlDeviceGetClockInfo, rc_t, (dev_t_, int, unsigned*));
  LOAD(nvmlDeviceGetMaxClockInfo, rc_t, (dev_t_, int, unsigned*));
  const double t1 = now_ms();
  const rc_t init = nvmlInitWithFlags(flags);
  const double t2 = now_ms();
  if (init != 0) {
    printf("flags=%u init_rc=%d init_ms=%.2f\n", flags, init, t2 - t1);
    return 1;
  }
  unsigned count = 0;
  nvmlDeviceGetCount_v2(&count);
  dev_t_ handles[64] = {0};
  rc_t handle_rc = 0;
  for (unsigned i = 0; i < count && i < 64; ++i)
    handle_rc |= nvmlDeviceGetHandleByIndex_v2(i, &handles[i]);
  const double t3 = now_ms();
  /* Said before the reads: a read through a handle NO_ATTACH leaves unusable
   * may crash the process. */
  fprintf(stderr, "flags=%u init_rc=%d devices=%u handle_rc=%d\n", flags, init, count, handle_rc);
  if (handle_rc != 0 || count == 0) {
    printf("flags=%u devices=%u init_ms=%.2f handles_ms=%.2f handle_rc=%d (no reads)\n", flags,
           count, t2 - t1, t3 - t2, handle_rc);
    return 1;
  }
  /* The first device's first reads, in the order a query makes them. */
  char name[96];
  unsigned long long memory[3];
  unsigned u[2], value;
  rc_t rcs[8];
  double at[9];
  at[0] = now_ms();
  rcs[0] = nvmlDeviceGetName(handles[0], name, sizeof name);
  at[1] = now_ms();
  rcs[1] = nvmlDeviceGetTemperature(handles[0], 0, &value);
  at[2] = now_ms();
  rcs[2] = nvmlDeviceGetUtilizationRates(handles[0], u);
  at[3] = now_ms();
  rcs[3] = nvmlDeviceGetMemoryInfo(handles[0], memory);
  at[4] = now_ms();
  rcs[4] = nvmlDeviceGetPowerUsage(handles[0], &value);
  at[5] = now_ms();
  rcs[5] = nvmlDeviceGetEnforcedPowerLimit(handles[0], &value);
  at[6] = now_ms();
  rcs[6] = nvmlDeviceGetClockInfo(handles[0], 1, &value);
  at[7] = now_ms();
  rcs[7] = nvmlDeviceGetMaxClockInfo(handles[0], 1, &value);
  at[8] = now_ms();
  printf(
      "flags=%u devices=%u dlopen_ms=%.2f init_ms=%.2f handles_ms=%.2f handle_rc=%d reads_ms=%.2f "
      "total_ms=%.2f",
      flags, count, t1 - t0, t2 - t1, t3 - t2, handle_rc, at[8] - at[0], at[8] - t0);
  static const char* names[8] = {"name",  "temp",     "util",  "mem",
                                 "power", "enforced", "clock", "maxclock"};
  for (int i = 0; i < 8; ++i) printf(" %s=%.2f/rc%d", names[i], at[i + 1] - at[i], rcs[i]);
  printf("\n");
  return 0;
}
