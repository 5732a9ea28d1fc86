// gpuwatch._core: the C++ core for Python, bound over the public headers
// (include/gpuwatch/monitor.h) only. Snapshots and events cross as JSON text
// (the schemas of docs/json.md and docs/outputs.md); the Python package
// parses them. Every call that waits or reads the GPUs releases the GIL, and
// no C++ thread ever calls into Python: events are pulled. A Status becomes a
// Python exception in one place (Unwrap).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>

#include "gpuwatch/monitor.h"

namespace py = pybind11;
using gpuwatch::Result;
using gpuwatch::Status;

namespace {

// The Python exceptions, created once at import (gpuwatch.Error and its
// subclasses in the package).
struct Errors {
  PyObject* base = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* not_found = nullptr;
  PyObject* unavailable = nullptr;
  PyObject* permission_denied = nullptr;
};
Errors& errors() {
  static Errors e;  // set once at import, read-only after
  return e;
}

[[noreturn]] void Raise(const Status& s) {
  const Errors& e = errors();
  PyObject* type = e.base;
  switch (s.code()) {
    case Status::Code::kInvalidArgument:
      type = e.invalid_argument;
      break;
    case Status::Code::kNotFound:
      type = e.not_found;
      break;
    case Status::Code::kUnavailable:
      type = e.unavailable;
      break;
    case Status::Code::kPermissionDenied:
      type = e.permission_denied;
      break;
    default:
      break;
  }
  PyErr_SetString(type, s.message().c_str());
  throw py::error_already_set();
}

// With the GIL held.
template <typename T>
T Unwrap(Result<T> r) {
  if (!r) Raise(r.error());
  return std::move(*r);
}

// Runs `f` without the GIL and returns its Result, to unwrap with it.
template <typename F>
auto WithoutGil(F&& f) {
  py::gil_scoped_release nogil;
  return f();
}

gpuwatch::MonitorOptions Options(bool demo, const std::string& scenario, const std::string& replay,
                                 const std::string& demo_dir, const std::string& host_proc,
                                 double interval_s, bool processes, const std::string& rules) {
  gpuwatch::MonitorOptions o;
  o.demo = demo;
  o.scenario = scenario;
  o.replay = replay;
  o.demo_dir = demo_dir;
  o.host_proc = host_proc;
  // nan, inf or 1e300 seconds would be an undefined cast to an integer.
  if (!(interval_s > 0) || interval_s > 365.0 * 86400) {
    Raise(Status::InvalidArgument("interval_s: expected seconds above 0 and at most a year, got " +
                                  std::to_string(interval_s)));
  }
  o.interval = std::chrono::milliseconds(static_cast<long long>(interval_s * 1000));
  o.processes = processes;
  o.rules = rules;
  return o;
}

// A running Monitor; closes on close() or when collected.
class PyMonitor {
 public:
  explicit PyMonitor(const gpuwatch::MonitorOptions& o)
      : monitor_(Unwrap(WithoutGil([&] { return gpuwatch::Monitor::Start(o); }))) {}
  void Close() {
    py::gil_scoped_release nogil;
    monitor_.reset();
  }
  gpuwatch::Monitor& m() {
    if (!monitor_) Raise(Status::Unavailable("the sampler is closed"));
    return *monitor_;
  }
  // (sequence, snapshot JSON) of the newest snapshot, or None.
  py::object Latest() {
    auto s = m().Latest();
    if (!s) return py::none();
    return py::make_tuple(s->sequence, py::str(gpuwatch::SnapshotJson(*s)));
  }
  py::object WaitNewer(std::uint64_t after, double timeout_s) {
    gpuwatch::Monitor& mon = m();
    std::shared_ptr<const gpuwatch::Snapshot> s;
    std::string text;
    {
      py::gil_scoped_release nogil;
      s = mon.WaitNewer(after, std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000)));
      if (s) text = gpuwatch::SnapshotJson(*s);
    }
    if (!s) return py::none();
    return py::make_tuple(s->sequence, py::str(text));
  }
  std::vector<std::string> TakeEvents() {
    std::vector<std::string> out;
    for (const auto& e : m().TakeEvents()) out.push_back(gpuwatch::EventJson(e));
    return out;
  }
  std::uint64_t Dropped() { return m().dropped_events(); }
  std::uint64_t OpenWindow() { return m().OpenWindow(); }
  py::dict WindowStats(std::uint64_t id, bool reset) {
    auto stats = Unwrap(m().WindowStats(id, reset));
    py::dict out;
    for (const auto& [key, s] : stats) {
      out[py::str(key)] = py::make_tuple(s.mean, s.min, s.max, s.last, s.count);
    }
    return out;
  }
  void CloseWindow(std::uint64_t id) { m().CloseWindow(id); }

 private:
  std::unique_ptr<gpuwatch::Monitor> monitor_;
};

}  // namespace

PYBIND11_MODULE(_core, mod) {
  mod.doc() = "gpuwatch's C++ core (use the gpuwatch package, not this module)";

  mod.def("_set_errors", [](py::object base, py::object invalid, py::object not_found,
                            py::object unavailable, py::object denied) {
    // Kept alive by the gpuwatch package, which defines them.
    errors() = {base.ptr(), invalid.ptr(), not_found.ptr(), unavailable.ptr(), denied.ptr()};
  });

  mod.def(
      "read_once",
      [](bool demo, const std::string& scenario, const std::string& replay,
         const std::string& demo_dir, const std::string& host_proc, bool processes) {
        const auto o = Options(demo, scenario, replay, demo_dir, host_proc, 1.0, processes, "");
        auto snapshot = Unwrap(WithoutGil([&] { return gpuwatch::ReadOnce(o); }));
        return gpuwatch::SnapshotJson(snapshot);
      },
      py::arg("demo"), py::arg("scenario"), py::arg("replay"), py::arg("demo_dir"),
      py::arg("host_proc"), py::arg("processes"));

  mod.def(
      "select",
      [](bool demo, const std::string& scenario, const std::string& demo_dir, int count,
         std::optional<double> min_free_bytes, std::optional<double> max_utilization,
         std::optional<double> max_memory_utilization, std::vector<int> exclude,
         const std::string& order, std::vector<std::string> free_users) {
        const auto o = Options(demo, scenario, "", demo_dir, "", 1.0, true, "");
        gpuwatch::SelectRequest r;
        r.count = count;
        r.min_free_bytes = min_free_bytes;
        r.max_utilization = max_utilization;
        r.max_memory_utilization = max_memory_utilization;
        r.exclude = std::move(exclude);
        r.order = order;
        r.free_users = std::move(free_users);
        return Unwrap(WithoutGil([&] { return gpuwatch::SelectJson(o, r); }));
      },
      py::arg("demo"), py::arg("scenario"), py::arg("demo_dir"), py::arg("count"),
      py::arg("min_free_bytes"), py::arg("max_utilization"), py::arg("max_memory_utilization"),
      py::arg("exclude"), py::arg("order"), py::arg("free_users"));

  mod.def(
      "check_leak",
      [](const std::vector<double>& bytes, double min_bytes_per_iteration) {
        const auto v = Unwrap(gpuwatch::CheckSeriesForLeak(bytes, min_bytes_per_iteration));
        py::dict out;
        out["leak"] = v.leak;
        out["bytes_per_iteration"] = v.bytes_per_iteration;
        out["low"] = v.low;
        out["high"] = v.high;
        out["confidence"] = v.confidence;
        out["iterations"] = v.iterations;
        out["explanation"] = v.explanation;
        return out;
      },
      py::arg("bytes"), py::arg("min_bytes_per_iteration"));

  py::class_<PyMonitor>(mod, "Monitor")
      .def(py::init([](bool demo, const std::string& scenario, const std::string& replay,
                       const std::string& demo_dir, const std::string& host_proc, double interval_s,
                       bool processes, const std::string& rules) {
             return std::make_unique<PyMonitor>(Options(demo, scenario, replay, demo_dir, host_proc,
                                                        interval_s, processes, rules));
           }),
           py::arg("demo"), py::arg("scenario"), py::arg("replay"), py::arg("demo_dir"),
           py::arg("host_proc"), py::arg("interval_s"), py::arg("processes"), py::arg("rules"))
      .def("close", &PyMonitor::Close)
      .def("latest", &PyMonitor::Latest)
      .def("wait_newer", &PyMonitor::WaitNewer, py::arg("after"), py::arg("timeout_s"))
      .def("take_events", &PyMonitor::TakeEvents)
      .def("dropped_events", &PyMonitor::Dropped)
      .def("open_window", &PyMonitor::OpenWindow)
      .def("window_stats", &PyMonitor::WindowStats, py::arg("window"), py::arg("reset"))
      .def("close_window", &PyMonitor::CloseWindow, py::arg("window"));
}
