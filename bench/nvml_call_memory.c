/* What the NVML calls of a monitor cost in memory: the resident KiB of
 * libnvidia-ml, libcuda and anonymous memory (heap included) of this process
 * after each kind of call is first made on every GPU, in the order
 * `gpuwatch top` makes them; then the calls of a full `watch` sample that top
 * does not make, and 30 more rounds of top's calls (steady state). It says
 * which calls make a monitor's NVML and libcuda resident, and how much.
 * Resolved with dlopen, as gpuwatch does.
 * Usage: nvml_call_memory [LIBRARY]   (default libnvidia-ml.so.1) */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml_c_types.h"

static void* lib;
static ret_t missing(void) { return 13; /* FUNCTION_NOT_FOUND */ }
typedef ret_t (*fn_t)();
static fn_t sym(const char* name) {
  fn_t f = (fn_t)dlsym(lib, name);
  return f ? f : (fn_t)missing;
}

static unsigned count;
static dev_t_ dev[64];
static void* events;

struct rss { long nvml, cuda, anon; };
static struct rss measure(void) {
  struct rss r = {0, 0, 0};
  FILE* f = fopen("/proc/self/smaps", "r");
  char line[512], name[512] = "";
  while (f && fgets(line, sizeof line, f)) {
    unsigned long a, b;
    long kb;
    if (sscanf(line, "%lx-%lx", &a, &b) == 2 && strchr(line, ' ')) {
      /* a mapping's header: its path is the 6th field, if any */
      char perms[8], off[32], devno[16], path[512] = "";
      unsigned long inode;
      if (sscanf(line, "%*s %7s %31s %15s %lu %511s", perms, off, devno, &inode, path) >= 4)
        strcpy(name, path);
    } else if (sscanf(line, "Rss: %ld kB", &kb) == 1) {
      if (strstr(name, "libnvidia-ml")) r.nvml += kb;
      else if (strstr(name, "libcuda")) r.cuda += kb;
      else if (name[0] == 0 || strcmp(name, "[heap]") == 0) r.anon += kb;
    }
  }
  if (f) fclose(f);
  return r;
}

static struct rss last;
static void report(const char* step) {
  struct rss now = measure();
  printf("%-44s %8ld %+6ld %8ld %+6ld %8ld %+6ld\n", step, now.nvml, now.nvml - last.nvml,
         now.cuda, now.cuda - last.cuda, now.anon, now.anon - last.anon);
  last = now;
}

/* top's calls on every GPU, one kind a step, each step reported when `say`. */
static void top_round(int say) {
  char text[256];
  unsigned u, u2;
  unsigned long long ull;
#define EACH(what, call) \
  do { for (unsigned d = 0; d < count; ++d) { call; } if (say) report(what); } while (0)
  EACH("name, uuid", (sym("nvmlDeviceGetName")(dev[d], text, 96u), sym("nvmlDeviceGetUUID")(dev[d], text, 96u)));
  EACH("memory info v2", { mem2_t m = {0}; m.version = (unsigned)(sizeof(mem2_t) | (2u << 24)); sym("nvmlDeviceGetMemoryInfo_v2")(dev[d], &m); });
  EACH("MIG mode", sym("nvmlDeviceGetMigMode")(dev[d], &u, &u2));
  EACH("power limit", sym("nvmlDeviceGetPowerManagementLimit")(dev[d], &u));
  EACH("PCIe link generation, width", (sym("nvmlDeviceGetCurrPcieLinkGeneration")(dev[d], &u), sym("nvmlDeviceGetCurrPcieLinkWidth")(dev[d], &u)));
  EACH("ECC uncorrected volatile", sym("nvmlDeviceGetTotalEccErrors")(dev[d], 1, 0, &ull));
  EACH("utilization rates", { util_t x; sym("nvmlDeviceGetUtilizationRates")(dev[d], &x); });
  EACH("temperature", sym("nvmlDeviceGetTemperature")(dev[d], 0, &u));
  EACH("power usage", sym("nvmlDeviceGetPowerUsage")(dev[d], &u));
  EACH("clocks SM, MEM", (sym("nvmlDeviceGetClockInfo")(dev[d], 1, &u), sym("nvmlDeviceGetClockInfo")(dev[d], 2, &u)));
  EACH("clock event reasons", sym("nvmlDeviceGetCurrentClocksEventReasons")(dev[d], &ull));
  EACH("PCIe throughput TX, RX", (sym("nvmlDeviceGetPcieThroughput")(dev[d], 0, &u), sym("nvmlDeviceGetPcieThroughput")(dev[d], 1, &u)));
  EACH("XID events (drained)", { evt_t e; if (events) while (sym("nvmlEventSetWait_v2")(events, &e, 0u) == 0) {} });
  EACH("processes (compute, graphics v3)", { proc_t p[64]; unsigned n = 64; sym("nvmlDeviceGetComputeRunningProcesses_v3")(dev[d], &n, p); n = 64; sym("nvmlDeviceGetGraphicsRunningProcesses_v3")(dev[d], &n, p); });
  EACH("process utilization", { putil_t p[64]; unsigned n = 64; sym("nvmlDeviceGetProcessUtilization")(dev[d], p, &n, 0ull); });
}

int main(int argc, char** argv) {
  printf("%-44s %8s %6s %8s %6s %8s %6s\n", "after (KiB resident)", "nvml", "+", "cuda", "+", "anon", "+");
  last = measure();
  report("start");
  lib = dlopen(argc > 1 ? argv[1] : "libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) { fprintf(stderr, "nvml_call_memory: %s\n", dlerror()); return 1; }
  report("dlopen");
  if (sym("nvmlInit_v2")() != 0) { fprintf(stderr, "nvml_call_memory: nvmlInit_v2 failed\n"); return 1; }
  report("nvmlInit_v2");
  sym("nvmlDeviceGetCount_v2")(&count);
  if (count > 64) count = 64;
  for (unsigned d = 0; d < count; ++d) sym("nvmlDeviceGetHandleByIndex_v2")(d, &dev[d]);
  report("count, handles");
  char text[256];
  int v;
  sym("nvmlSystemGetDriverVersion")(text, 80u);
  report("driver version");
  sym("nvmlSystemGetCudaDriverVersion_v2")(&v);
  report("CUDA driver version");
  sym("nvmlSystemGetNVMLVersion")(text, 80u);
  report("NVML version");
  sym("nvmlEventSetCreate")(&events);
  for (unsigned d = 0; d < count; ++d) sym("nvmlDeviceRegisterEvents")(dev[d], 0x8ull, events);
  report("XID event set, registered");
  top_round(1);
  for (int r = 0; r < 30; ++r) top_round(0);
  report("30 more rounds of the above");
  /* What a full `watch` sample adds. */
  unsigned u;
  for (unsigned d = 0; d < count; ++d) {
    bar1_t b; sym("nvmlDeviceGetBAR1MemoryInfo")(dev[d], &b);
    sym("nvmlDeviceGetEncoderUtilization")(dev[d], &u, &u);
    sym("nvmlDeviceGetDecoderUtilization")(dev[d], &u, &u);
    fv_t fv[3] = {{140, 0}, {186, 0}, {185, 0}};
    sym("nvmlDeviceGetFieldValues")(dev[d], 3, fv);
    sym("nvmlDeviceGetClockInfo")(dev[d], 0, &u);
    sym("nvmlDeviceGetPerformanceState")(dev[d], &u);
    sym("nvmlDeviceGetFanSpeed")(dev[d], &u);
    unsigned long long e; sym("nvmlDeviceGetTotalEnergyConsumption")(dev[d], &e);
    smp_t s[256]; unsigned n = 256; int vt;
    sym("nvmlDeviceGetSamples")(dev[d], 0, 0ull, &vt, &n, s);
    n = 256; sym("nvmlDeviceGetSamples")(dev[d], 1, 0ull, &vt, &n, s);
    sym("nvmlDeviceGetRemappedRows")(dev[d], &u, &u, &u, &u);
    for (int t = 0; t < 2; ++t) for (int c = 0; c < 2; ++c) sym("nvmlDeviceGetTotalEccErrors")(dev[d], t, c, &e);
  }
  report("what a full watch sample adds");
  return 0;
}
