// The fixture of the fake NVML library's own tests: the built .so is
// dlopen'ed and driven by the scenarios in scenarios/test/ (and small ones
// written by the tests), with GPUWATCH_FAKE_TIME freezing scenario time.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/nvml/nvml_symbols.h"

extern "C" {
// Declared only for decltype: the test resolves every call with dlsym.
GPUWATCH_NVML_SYMBOLS(GPUWATCH_NVML_DECLARE)
}

inline constexpr unsigned long long kMiB = 1048576ull;
inline constexpr unsigned long long kGiB = 1024ull * kMiB;
inline constexpr nvmlReturn_t kDeprecated = 26;
inline constexpr const char* kLibrary = GPUWATCH_BINARY_DIR "/lib/libnvidia-ml-fake.so";
inline constexpr const char* kOldLibrary = GPUWATCH_BINARY_DIR "/lib/libnvidia-ml-fake-old.so";

// Kills a child the test started and waits for it.
inline void Reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

inline std::string Scenario(const std::string& name) {
  return std::string(GPUWATCH_SOURCE_DIR) + "/scenarios/test/" + name;
}

inline void* Library() {
  static void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  return handle;
}

template <typename Fn>
Fn Resolve(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

// NVML(nvmlDeviceGetName)(...) calls the fake library's symbol.
#define NVML(name) Resolve<decltype(&::name)>(Library(), #name)

class FakeNvml : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(Library(), nullptr) << dlerror();
    unsetenv("GPUWATCH_FAKE_TIME");
  }
  void TearDown() override {
    while (NVML(nvmlShutdown)() == NVML_SUCCESS) {
    }
    unsetenv("GPUWATCH_FAKE_TIME");
    for (const std::string& path : Written()) std::remove(path.c_str());
    Written().clear();
  }

  // Loads `path` at frozen time `t` (seconds).
  void Start(const std::string& path, double t = 0) {
    setenv("GPUWATCH_FAKE_SCENARIO", path.c_str(), 1);
    At(t);
    ASSERT_EQ(NVML(nvmlInit_v2)(), NVML_SUCCESS);
  }
  static void At(double t) { setenv("GPUWATCH_FAKE_TIME", std::to_string(t).c_str(), 1); }

  // Writes a scenario into the temp dir and returns its path. The name
  // carries the pid: ctest runs each test case as its own process, several
  // at once, and TempDir() is shared by all.
  static std::string Write(const std::string& name, const std::string& text) {
    const std::string path = testing::TempDir() + "/" + std::to_string(getpid()) + "-" + name;
    std::ofstream(path) << text;
    Written().push_back(path);  // removed when the test ends
    return path;
  }
  static std::vector<std::string>& Written() {
    static std::vector<std::string> paths;
    return paths;
  }

  static nvmlDevice_t Device(unsigned index) {
    nvmlDevice_t device = nullptr;
    EXPECT_EQ(NVML(nvmlDeviceGetHandleByIndex_v2)(index, &device), NVML_SUCCESS);
    return device;
  }
  static unsigned Utilization(nvmlDevice_t device) {
    nvmlUtilization_t u{};
    EXPECT_EQ(NVML(nvmlDeviceGetUtilizationRates)(device, &u), NVML_SUCCESS);
    return u.gpu;
  }
  static std::string Name(nvmlDevice_t device) {
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    EXPECT_EQ(NVML(nvmlDeviceGetName)(device, name, sizeof name), NVML_SUCCESS);
    return name;
  }
  static std::vector<nvmlProcessInfo_t> Processes(nvmlDevice_t device) {
    std::vector<nvmlProcessInfo_t> infos(16);
    auto count = static_cast<unsigned>(infos.size());
    EXPECT_EQ(NVML(nvmlDeviceGetComputeRunningProcesses_v3)(device, &count, infos.data()),
              NVML_SUCCESS);
    infos.resize(count);
    return infos;
  }
};
