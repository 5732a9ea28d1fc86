// gpuwatch: dispatches to the commands; nothing else lives here.
#include <algorithm>
#include <exception>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace gpuwatch::cli;
  try {
    CLI::App app{"gpuwatch: what every GPU and every process holds, now and over time", "gpuwatch"};
    const std::string version_text = std::string("gpuwatch ") + GPUWATCH_VERSION;
    app.set_version_flag("-V,--version", version_text);
    CLI::App* version =
        app.add_subcommand("version", "print gpuwatch's version (as -V, --version)");
    app.require_subcommand(0, 1);
    CommonArgs common;
    AddCommonOptions(app, common);
    // Common options are accepted after the subcommand too.
    app.fallthrough();
    const Runner status = AddStatusCommand(app, common);
    const Runner runners[] = {AddQueryCommand(app, common),  AddDoctorCommand(app, common),
                              AddWatchCommand(app, common),  AddRunCommand(app, common),
                              AddReportCommand(app, common), AddServeCommand(app, common),
                              AddSelectCommand(app, common), AddTopCommand(app, common)};
    auto args = NormalizeArgs(argc, argv);
    if (!args) {
      std::cerr << "gpuwatch: " << args.error().message() << "\n";
      return kExitUsage;
    }
    common.command = std::move(args->command);
    std::reverse(args->options.begin(), args->options.end());  // CLI11 takes them in reverse
    try {
      app.parse(args->options);
    } catch (const CLI::ParseError& e) {
      const int code = app.exit(e);
      return code == 0 ? kExitOk : kExitUsage;
    }
    if (common.command && !common.command->empty() && !app.got_subcommand("run")) {
      std::cerr << "gpuwatch: only `gpuwatch run` takes a command after --\n";
      return kExitUsage;
    }
    if (version->parsed()) {
      std::cout << version_text << "\n";
      return kExitOk;
    }
    for (const auto& run : runners) {
      if (const int code = run(); code >= 0) return code;
    }
    return status();
  } catch (const std::exception& e) {
    std::cerr << "gpuwatch: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}
