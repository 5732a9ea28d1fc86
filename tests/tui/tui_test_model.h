// The demo fleet as `top` sees it, for the view tests: the real NvmlBackend
// over the fake NVML, drawn into a canvas.
#pragma once

#include "tui/model.h"
#include "tui/process_rows.h"
#include "tui/view.h"
#include "tui/view_state.h"

namespace gpuwatch::tui {

// One host with the demo fleet's first sample, read twice a second apart so
// the charts have points; only `fields` are asked of the driver.
HostView DemoHost(const FieldMask& fields = AllFields());
// That host, as `top --demo` shows it.
TopModel DemoModel(const FieldMask& fields = AllFields());

struct Drawn {
  Canvas canvas;
  Layout layout;
};
Drawn Draw(const TopModel& m, ViewState& st, int w, int h, const Families* f = nullptr);

}  // namespace gpuwatch::tui
