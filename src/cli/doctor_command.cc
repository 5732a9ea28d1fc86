// `gpuwatch doctor`: is everything gpuwatch needs there, and what to do about
// each thing that is not. Exit 0 when healthy.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "engine/hang_report.h"
#include "sampler/collect.h"

namespace gpuwatch::cli {
namespace {

struct Report {
  bool color = false;
  int problems = 0;
  int warnings = 0;
  void Ok(const std::string& what) { std::cout << Mark("ok  ", "\033[32m") << what << "\n"; }
  void Warn(const std::string& what, const std::string& advice) {
    ++warnings;
    std::cout << Mark("warn", "\033[33m") << what << "\n";
    if (!advice.empty()) std::cout << "       → " << advice << "\n";
  }
  void Fail(const std::string& what, const std::string& advice) {
    ++problems;
    std::cout << Mark("FAIL", "\033[31m") << what << "\n";
    if (!advice.empty()) std::cout << "       → " << advice << "\n";
  }
  std::string Mark(std::string_view word, std::string_view style) const {
    return color ? fmt::format("{}[{}]\033[0m ", style, word) : fmt::format("[{}] ", word);
  }
};

std::string Text(const Reading& r) {
  if (r.is_text()) return r.text();
  if (r.is_number()) return fmt::format("{}", r.number());
  return "N/A";
}

void CheckEnvironment(const host::Environment& env, const CommonArgs& common, Report& report) {
  if (env.in_container) {
    report.Ok(fmt::format("running in a container ({})", env.container_runtime.empty()
                                                             ? "unknown runtime"
                                                             : env.container_runtime));
  } else {
    report.Ok("running on the host (no container detected)");
  }
  if (env.own_pid_namespace && common.host_proc.empty()) {
    report.Warn(
        "gpuwatch is in its own PID namespace: NVML reports host PIDs, which are not visible here",
        "run the container with --pid=host (Kubernetes: hostPID: true), or mount the host's /proc "
        "and pass --host-proc /host/proc; until then processes show as \"host pid N, not visible "
        "here\"");
  } else {
    report.Ok(env.own_pid_namespace
                  ? "own PID namespace, reading the host /proc given by --host-proc"
                  : "same PID namespace as the driver: process PIDs resolve locally");
  }
}

// Can the GPU processes be attributed (user, command, container) from here?
void CheckProcessVisibility(const Snapshot& snap, Report& report) {
  std::map<HostProcess::Visibility, int> by;
  int total = 0;
  for (const auto& d : snap.devices) {
    for (const auto& p : d.processes) {
      ++by[p.host.visibility];
      ++total;
    }
  }
  if (total == 0) {
    report.Ok("no GPU processes running now (process visibility not checked)");
    return;
  }
  const int visible = by[HostProcess::Visibility::kVisible];
  if (visible == total) {
    report.Ok(fmt::format("{} GPU process(es), all attributed (user, command, container)", total));
  }
  if (const int n = by[HostProcess::Visibility::kNoPermission]; n > 0) {
    report.Warn(
        fmt::format("{} of {} GPU process(es) have /proc entries gpuwatch may not read", n, total),
        "run as root (or with CAP_SYS_PTRACE) to see other users' processes");
  }
  if (const int n = by[HostProcess::Visibility::kOtherPidNs]; n > 0) {
    report.Warn(fmt::format("{} of {} GPU process(es) are host PIDs not visible here", n, total),
                "see the PID namespace advice above");
  }
  if (const int n = by[HostProcess::Visibility::kExited]; n > 0) {
    std::cout << report.Mark("info", "\033[2m")
              << fmt::format("{} of {} GPU process(es) exited while being read (normal churn)\n", n,
                             total);
  }
}

int RunDoctor(const CommonArgs& common) {
  Report report;
  report.color = UseColor(common);
  if (common.demo || !common.scenario.empty()) {
    std::cout << "DEMO: checking the simulated fleet (fake NVML), not this machine's GPUs\n\n";
  }
  const engine::HangReport hangs;  // a driver that never answers is said, not silent
  auto source = OpenSource(common);
  if (!source) {
    report.Fail("cannot use NVML", source.error().message());
    host::ProcessResolver resolver(ProcOptionsFor(common, ""));
    CheckEnvironment(resolver.environment(), common, report);
    std::cout << fmt::format(
        "\n{} problem(s). gpuwatch --demo shows what gpuwatch does with GPUs.\n", report.problems);
    return kExitFailure;
  }
  Backend& backend = *source->backend;
  const BackendInfo& info = backend.info();
  report.Ok(fmt::format("NVML library: {}", info.library_path));
  CollectOptions all;
  Snapshot snap = CollectOnce(backend, source->resolver.get(), all);
  report.Ok(fmt::format("driver {}, CUDA {}, NVML {}", Text(snap.host[FieldId::kDriverVersion]),
                        Text(snap.host[FieldId::kCudaDriverVersion]),
                        Text(snap.host[FieldId::kNvmlVersion])));
  if (!info.missing_symbols.empty()) {
    std::string names;
    for (const auto& s : info.missing_symbols) names += (names.empty() ? "" : ", ") + s;
    report.Warn(fmt::format("this driver's NVML lacks {} entry point(s): {}",
                            info.missing_symbols.size(), names),
                "gpuwatch falls back to older calls where there are some; the rest show as N/A. A "
                "newer driver brings them.");
  }
  if (snap.devices.empty()) {
    report.Fail("NVML reports no GPUs",
                "check `nvidia-smi -L`; in a container, pass the GPUs (--gpus all)");
  } else {
    report.Ok(fmt::format("{} GPU(s)", snap.devices.size()));
  }
  if (source->resolver) {
    CheckEnvironment(source->resolver->environment(), common, report);
  } else {
    report.Ok("replaying a recording: the checks below describe the recorded GPUs");
  }

  for (const auto& d : snap.devices) {
    const std::string label = fmt::format("GPU {} ({})", d.index, Text(d.fields[FieldId::kName]));
    if (d.health == DeviceHealth::kLost) {
      report.Fail(fmt::format("{}: lost: {}", label, d.health_detail),
                  "the GPU fell off the bus (see `dmesg` for Xid 79); it needs a reset or a "
                  "reboot. gpuwatch keeps re-probing it.");
      continue;
    }
    const Reading& persistence = d.fields[FieldId::kPersistenceMode];
    if (persistence.is_number() && persistence.number() == 0) {
      report.Warn(fmt::format("{}: persistence mode is off", label),
                  "each NVML start then re-initialises the GPU (slow first queries); an "
                  "administrator can enable nvidia-persistenced");
    }
    const Reading& mig = d.fields[FieldId::kMigMode];
    if (mig.is_number() && mig.number() == 1) {
      std::size_t n = 0;
      for (const auto& m : snap.mig_devices) n += m.index == d.index ? 1 : 0;
      report.Ok(fmt::format(
          "{}: MIG enabled, {} instance(s); utilization is per instance only through DCGM", label,
          n));
    }
    std::map<std::string, std::vector<std::string>> by_reason;
    const FieldRange r = RangeOf(Scope::kDevice);
    for (std::size_t i = r.first; i < r.first + r.count; ++i) {
      const auto id = static_cast<FieldId>(i);
      const Reading& v = d.fields[id];
      if (v.ok()) continue;
      by_reason[std::string(MissingName(v.missing())) +
                (v.detail().empty() ? "" : " (" + v.detail() + ")")]
          .push_back(std::string(Info(id).key));
    }
    if (by_reason.empty()) {
      report.Ok(fmt::format("{}: every field readable", label));
    }
    for (const auto& [why, keys] : by_reason) {
      std::string list;
      for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
      const bool permission = why.starts_with("no_permission");
      const std::string line = fmt::format("{}: {}: {}", label, list, why);
      if (permission) {
        report.Warn(line,
                    "run gpuwatch as root or as a user allowed by the driver "
                    "(NVreg_RestrictProfilingToAdminUsers)");
      } else if (why.starts_with("not_supported")) {
        std::cout << report.Mark("info", "\033[2m") << line
                  << " — this GPU does not offer it; shown as N/A\n";
      } else {
        report.Warn(line, "");
      }
    }
  }
  CheckProcessVisibility(snap, report);
  std::cout << "\n";
  if (report.problems > 0) {
    std::cout << fmt::format("{} problem(s), {} warning(s).\n", report.problems, report.warnings);
    return kExitFailure;
  }
  std::cout << fmt::format("healthy ({} warning(s)).\n", report.warnings);
  return kExitOk;
}

}  // namespace

Runner AddDoctorCommand(CLI::App& app, const CommonArgs& common) {
  CLI::App* d =
      app.add_subcommand("doctor", "Check the driver, NVML, devices, containers; say what to fix");
  return [d, &common]() -> int {
    if (!d->parsed()) return -1;
    return RunDoctor(common);
  };
}

}  // namespace gpuwatch::cli
