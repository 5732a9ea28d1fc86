// gpuwatch-demo-trainer: the training job of `gpuwatch sweep --demo` and of
// the sweep tests. It asks the fake NVML what its device grants it (the
// scenario's memory expression of its value, nvml_sweep.cc) and exits as
// PyTorch does when that is less than it wants (stderr "CUDA out of
// memory", exit status 1); else it reports framework memory and one step
// mark per step on GPUWATCH_SOCKET until it is stopped (docs/sweep.md).
//
//   gpuwatch-demo-trainer [--batch N] [--step-ms MS] [--saturate K] [--steps N] [--cache F]
//                         [--fail]
//
// --batch defaults to GPUWATCH_SWEEP_VALUE. With --saturate K the GPU runs K
// copies at full speed; more contend: each copy's step takes 1.5 * copies/K
// longer, so the total drops by a third past K (a margin no timing noise of
// a loaded machine crosses). The copies are counted every 5 steps.
// --fail exits 3 at once with an error that is not about memory.
// Of what it wants (w, the expression), 10 % is the CUDA context and 80 %
// allocated; the other 10 % is cache, of which --cache F (0 to 0.1, default
// 0) is whole free segments a caching allocator gives back short of memory:
// it runs out of memory only below w * (1 - F), and reports reserved,
// allocated and inactive split memory so (as gpuwatch.torch does).
#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "backends/nvml/nvml_api.h"
#include "children.h"

namespace {

namespace fs = std::filesystem;
using Allocate = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*, unsigned long long*);
constexpr double kGiB = 1024.0 * 1024 * 1024;

int Fail(const std::string& message, int status = 2) {
  std::fprintf(stderr, "gpuwatch-demo-trainer: %s\n", message.c_str());
  return status;
}

// $GPUWATCH_NVML_LIBRARY, else the fake beside this program, as built
// (lib/) or installed (../lib/gpuwatch/).
std::string Library() {
  if (const char* lib = std::getenv("GPUWATCH_NVML_LIBRARY"); lib != nullptr && *lib != '\0') {
    return lib;
  }
  std::error_code ec;
  const fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const fs::path& p : {dir / "lib" / "libnvidia-ml-fake.so",
                            dir.parent_path() / "lib" / "gpuwatch" / "libnvidia-ml-fake.so"}) {
    if (fs::exists(p, ec)) return p.string();
  }
  return "libnvidia-ml-fake.so";
}

int Socket() {
  const char* path = std::getenv("GPUWATCH_SOCKET");
  if (path == nullptr) return -1;
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

void Send(int fd, const std::string& line) {
  if (fd < 0) return;
  const std::string l = line + "\n";
  if (write(fd, l.data(), l.size()) < 0) return;  // gpuwatch went away: keep training
}

// Copies of a sweep running beside this one (this one included).
int Copies() {
  int n = 0;
  for (const auto& c : gpuwatch::fake_nvml::ChildrenOf(static_cast<unsigned>(getppid()))) {
    if (c.sweep_value) ++n;
  }
  return n > 0 ? n : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string batch;
  if (const char* v = std::getenv("GPUWATCH_SWEEP_VALUE")) batch = v;
  double step_ms = 20;
  int saturate = 0;
  long max_steps = -1;
  double cache = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--batch" && has_value) {
      batch = argv[++i];
    } else if (a == "--step-ms" && has_value) {
      step_ms = std::atof(argv[++i]);
    } else if (a == "--saturate" && has_value) {
      saturate = std::atoi(argv[++i]);
    } else if (a == "--steps" && has_value) {
      max_steps = std::atol(argv[++i]);
    } else if (a == "--cache" && has_value) {
      cache = std::atof(argv[++i]);
      if (!(cache >= 0 && cache <= 0.1)) return Fail("--cache takes a fraction from 0 to 0.1");
    } else if (a == "--fail") {
      return Fail("RuntimeError: the data loader found no files in ./data", 3);
    } else {
      return Fail("unknown argument \"" + a + "\"");
    }
  }
  if (batch.empty()) return Fail("no batch size: give --batch N or run under gpuwatch sweep");
  if (std::getenv("GPUWATCH_SWEEP_VALUE") == nullptr ||
      batch != std::getenv("GPUWATCH_SWEEP_VALUE")) {
    return Fail("--batch " + batch + " is not this run's GPUWATCH_SWEEP_VALUE");
  }
  const std::string library = Library();
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return Fail(std::string("cannot load the fake NVML: ") + dlerror());
  auto init = reinterpret_cast<nvmlReturn_t (*)()>(dlsym(lib, "nvmlInit_v2"));
  auto handle = reinterpret_cast<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>(
      dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto allocate = reinterpret_cast<Allocate>(dlsym(lib, "gpuwatch_fake_sweep_allocate"));
  if (init == nullptr || handle == nullptr || allocate == nullptr) {
    return Fail(library + " is not gpuwatch's fake NVML");
  }
  if (init() != NVML_SUCCESS) return Fail("nvmlInit failed (is GPUWATCH_FAKE_SCENARIO set?)");
  unsigned index = 0;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) index = std::atoi(visible);
  nvmlDevice_t device = nullptr;
  if (handle(index, &device) != NVML_SUCCESS) return Fail("no GPU " + std::to_string(index));
  unsigned long long wanted = 0, granted = 0;
  if (allocate(device, &wanted, &granted) != NVML_SUCCESS) {
    return Fail("the scenario has no sweep process for this run on GPU " + std::to_string(index) +
                " (docs/scenarios.md: pid: child with a memory expression of bs)");
  }
  const double w = static_cast<double>(wanted);
  const double needed = w * (1 - cache);
  if (static_cast<double>(granted) < needed) {
    std::fprintf(stderr,
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU %u "
                 "has %.2f GiB left for this process.\n",
                 needed / kGiB, index, static_cast<double>(granted) / kGiB);
    return 1;
  }
  const int fd = Socket();
  Send(fd, "hello framework=torch version=fake pid=" + std::to_string(getpid()));
  // Short of memory (granted under wanted) the allocator has freed cache.
  using Bytes = unsigned long long;
  const Bytes held = std::min(wanted, granted);
  const Bytes allocated = wanted / 10 * 8, reserved = held - wanted / 10;
  const Bytes releasable = held - std::min(held, static_cast<Bytes>(needed));
  const Bytes split = reserved - allocated - std::min(releasable, reserved - allocated);
  Send(fd, "mem framework=torch device=0 allocated=" + std::to_string(allocated) + " reserved=" +
               std::to_string(reserved) + " peak_inactive_split=" + std::to_string(split));
  int copies = 1;
  for (long step = 1; max_steps < 0 || step <= max_steps; ++step) {
    if (saturate > 0 && step % 5 == 1) copies = Copies();  // a /proc scan: every 100 ms
    const double slowdown =
        saturate > 0 && copies > saturate ? 1.5 * double(copies) / saturate : 1.0;
    std::this_thread::sleep_for(
        std::chrono::microseconds(static_cast<long>(step_ms * 1000 * slowdown)));
    Send(fd, "mark step=" + std::to_string(step));
  }
  if (fd >= 0) close(fd);
  return 0;
}
