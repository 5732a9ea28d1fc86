#include "tui_test_model.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "engine/source.h"
#include "sampler/collect.h"

namespace gpuwatch::tui {

HostView DemoHost(const FieldMask& fields) {
  engine::SourceOptions o;
  o.demo = true;
  o.demo_dir = GPUWATCH_BINARY_DIR;
  auto source = engine::OpenSource(o);
  EXPECT_TRUE(source) << source.error().message();
  HostView h;
  h.state.label = "demo-host";
  h.state.hostname = "demo-host";
  // At fixed scenario times (100 s, 101 s): the demo's sawtooths then give
  // the same values, and the same order, whenever the test runs.
  for (int i = 0; i < 2; ++i) {
    setenv("GPUWATCH_FAKE_TIME", std::to_string(100 + i).c_str(), 1);
    auto snap = std::make_shared<Snapshot>(
        CollectOnce(*source->backend, source->resolver.get(), CollectOptions{.fields = fields}));
    h.history.Add(*snap);
    h.state.snapshot = snap;
  }
  unsetenv("GPUWATCH_FAKE_TIME");
  return h;
}

TopModel DemoModel(const FieldMask& fields) {
  TopModel m;
  m.kind = SourceKind::kDemo;
  m.source_detail = "demo.yaml";
  m.hosts.push_back(DemoHost(fields));
  return m;
}

Drawn Draw(const TopModel& m, ViewState& st, int w, int h, const Families* f) {
  Canvas c(w, h);
  RenderInput in{m, st, f, nullptr,
                 m.hosts.empty() || !m.hosts[0].state.snapshot ? std::chrono::system_clock::now()
                                                               : m.hosts[0].state.snapshot->time};
  Layout layout = Render(in, c);
  return {std::move(c), std::move(layout)};
}

}  // namespace gpuwatch::tui
