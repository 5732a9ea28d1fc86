// What the /metrics tests share: the fixed scenario read through the real
// NVML backend and the fake library, its document rendered as a scrape would,
// and the sample lines of one family.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "../backends/fake_env.h"
#include "export/prometheus.h"
#include "sampler/collect.h"

namespace gpuwatch::metrics_test {

inline Snapshot Fixed() {
  auto backend = testing::OpenFake("fixed.yaml", 100);
  host::ProcOptions po;
  po.proc_dir = std::string(GPUWATCH_SOURCE_DIR) + "/scenarios/test/fixed.host/proc";
  po.is_host_proc = true;
  host::ProcessResolver resolver(po);
  return CollectOnce(*backend, &resolver, CollectOptions{});
}

inline std::string Render(const Snapshot& s, MetricsOptions o, MetricsInput in = {}) {
  Snapshot timed = s;  // how long a sample took is measured; the goldens hold one figure
  timed.sample_duration = std::chrono::milliseconds(2);
  in.snapshot = &timed;
  in.hostname = "node1";
  in.stats.version = "0.1.0";
  in.stats.scrapes = 3;
  in.stats.last_sample_age_seconds = 0.25;
  return RenderMetrics(in, o);
}

// Every sample line of `family` (exactly that name) in `text`.
inline std::vector<std::string> Samples(const std::string& text, const std::string& family) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(family + "{") || line.starts_with(family + " ")) out.push_back(line);
  }
  return out;
}

}  // namespace gpuwatch::metrics_test
