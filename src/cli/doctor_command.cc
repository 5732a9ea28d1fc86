// `gpuwatch doctor`: is everything gpuwatch needs there, and what to do about
// each thing that is not. Exit 0 when healthy.
#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/run_outputs.h"
#include "engine/doctor.h"
#include "engine/hang_report.h"
#include "sampler/collect.h"

namespace gpuwatch::cli {
namespace {

// Prints findings as doctor's checklist and counts them.
struct Report {
  bool color = false;
  int problems = 0;
  int warnings = 0;

  void Print(const std::vector<engine::Finding>& findings) {
    using Level = engine::Finding::Level;
    for (const auto& f : findings) {
      switch (f.level) {
        case Level::kOk:
          std::cout << Mark("ok  ", "\033[32m") << f.what << "\n";
          break;
        case Level::kInfo:
          std::cout << Mark("info", "\033[2m") << f.what << "\n";
          break;
        case Level::kWarning:
          ++warnings;
          std::cout << Mark("warn", "\033[33m") << f.what << "\n";
          break;
        case Level::kProblem:
          ++problems;
          std::cout << Mark("FAIL", "\033[31m") << f.what << "\n";
          break;
      }
      if (!f.advice.empty()) std::cout << "       → " << f.advice << "\n";
    }
  }
  std::string Mark(std::string_view word, std::string_view style) const {
    return color ? fmt::format("{}[{}]\033[0m ", style, word) : fmt::format("[{}] ", word);
  }
};

int RunDoctor(const CommonArgs& common) {
  Report report;
  report.color = UseColor(common);
  if (common.demo || !common.scenario.empty()) {
    std::cout << "DEMO: checking the simulated fleet (fake NVML), not this machine's GPUs\n\n";
  }
  const engine::HangReport hangs;  // a driver that never answers is said, not silent
  auto source = OpenSource(common);
  if (!source) {
    // The reason without OpenSource's "run gpuwatch doctor": this is doctor.
    report.Print({{engine::Finding::Level::kProblem,
                   "cannot use NVML: " + OneLineReason(source.error()), ""}});
    host::ProcessResolver resolver(engine::ProcOptionsFor(common, ""));
    report.Print(engine::CheckEnvironment(resolver.environment(), common.host_proc,
                                          /*have_driver=*/false));
    if (!common.demo && common.scenario.empty() && common.replay.empty()) {
      const char* library = std::getenv("GPUWATCH_NVML_LIBRARY");
      report.Print(
          engine::CheckNoDriver(resolver.environment(), "/dev", library == nullptr ? "" : library));
    }
    std::cout << fmt::format(
        "\n{} problem(s). gpuwatch --demo shows what gpuwatch does with GPUs.\n", report.problems);
    return kExitFailure;
  }
  const Snapshot snap = CollectOnce(*source->backend, source->resolver.get(), CollectOptions{});
  report.Print(engine::CheckDriver(source->backend->info(), snap));
  if (source->resolver) {
    report.Print(engine::CheckEnvironment(source->resolver->environment(), common.host_proc));
  } else {
    report.Print({{engine::Finding::Level::kOk,
                   "replaying a recording: the checks below describe the recorded GPUs", ""}});
  }
  report.Print(engine::CheckDevices(snap));
  report.Print(engine::CheckProcessVisibility(snap));
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
