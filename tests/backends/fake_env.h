// Test helpers: run the real NvmlBackend against the fake NVML library with a
// scenario from scenarios/test/ at a frozen scenario time.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "backends/nvml/nvml_backend.h"
#include "host/process_resolver.h"

namespace gpuwatch::testing {

inline std::string FakeLibrary(const std::string& name = "libnvidia-ml-fake.so") {
  return std::string(GPUWATCH_BINARY_DIR) + "/lib/" + name;
}

inline std::string TestScenario(const std::string& name) {
  return std::string(GPUWATCH_SOURCE_DIR) + "/scenarios/test/" + name;
}

// Freezes the fake's scenario time at `t`. Once the library is loaded, its
// threads may be reading the environment (a reader in a hung call), so the
// time goes through the library's gpuwatch_fake_set_time instead; before,
// through GPUWATCH_FAKE_TIME. Only for the default fake library.
inline void AtTime(double t) {
  if (void* lib = dlopen(FakeLibrary().c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    auto set = reinterpret_cast<void (*)(double)>(dlsym(lib, "gpuwatch_fake_set_time"));
    ASSERT_NE(set, nullptr) << dlerror();
    set(t);
    dlclose(lib);
    return;
  }
  setenv("GPUWATCH_FAKE_TIME", std::to_string(t).c_str(), 1);
}

// Sets the scenario and frozen time for the fake; restores nothing (each test
// sets what it needs).
inline void UseScenario(const std::string& name, double t) {
  setenv("GPUWATCH_FAKE_SCENARIO", TestScenario(name).c_str(), 1);
  AtTime(t);
}

// Every field of device `i`, with its processes when asked.
inline DeviceSample Read(Backend& b, int i, bool processes = true) {
  DeviceSample d;
  b.ReadDevice(i, AllFields(), processes, d);
  return d;
}

inline std::unique_ptr<nvml::NvmlBackend> OpenFake(
    const std::string& scenario, double t, const std::string& lib = "libnvidia-ml-fake.so") {
  UseScenario(scenario, t);
  nvml::NvmlOptions o;
  o.library_path = FakeLibrary(lib);
  auto b = nvml::NvmlBackend::Open(o);
  EXPECT_TRUE(b) << b.error().message();
  return b ? std::move(*b) : nullptr;
}

// The demo fleet (scenarios/demo.yaml) at scenario time `t`, and the options
// that attribute its processes from its host tree (scenarios/demo.host).
inline std::unique_ptr<nvml::NvmlBackend> OpenDemo(double t) {
  UseScenario("../demo.yaml", t);
  nvml::NvmlOptions o;
  o.library_path = FakeLibrary();
  o.demo = true;
  auto b = nvml::NvmlBackend::Open(o);
  EXPECT_TRUE(b) << b.error().message();
  return b ? std::move(*b) : nullptr;
}

inline host::ProcOptions DemoHostProc() {
  host::ProcOptions po;
  po.proc_dir = std::string(GPUWATCH_SOURCE_DIR) + "/scenarios/demo.host/proc";
  po.is_host_proc = true;
  return po;
}

}  // namespace gpuwatch::testing
