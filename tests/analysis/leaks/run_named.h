// Runs a named case of the leak evaluation set (leak_cases.cc) through the
// scenario directory and fake NVML of this build. Shared by the leak tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "leak_evaluation.h"

namespace gpuwatch::leaks::eval {

// This build's scenario directory and fake NVML.
inline const EvalPaths kPaths{GPUWATCH_SOURCE_DIR "/scenarios/leaks",
                              GPUWATCH_BINARY_DIR "/lib/libnvidia-ml-fake.so"};

inline CaseResult RunNamed(const std::string& name) {
  const LeakCase* c = FindCase(name);
  if (c == nullptr) {
    ADD_FAILURE() << "no case " << name;
    return {};
  }
  return RunCase(*c, kPaths);
}

}  // namespace gpuwatch::leaks::eval
