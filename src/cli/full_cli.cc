// gpuwatch-full's tree: every command, and the help, completion and man page
// derived from it (cli_app.h).
#include <iostream>
#include <memory>
#include <string>

#include "cli/cli_app.h"
#include "cli/completion.h"
#include "cli/help_format.h"
#include "cli/manpage.h"
#include "cli/top_cli.h"
#include "cli/top_remote.h"

namespace gpuwatch::cli {
namespace {

// `gpuwatch completion SHELL` and `gpuwatch man`: both print what is derived
// from the finished tree `root`.
Runner AddCompletionCommand(CLI::App& root) {
  auto shell = std::make_shared<std::string>();
  CLI::App* c = root.add_subcommand(
      "completion", "Print the shell completion script for bash, zsh or fish (docs/cli.md)");
  c->add_option("shell", *shell, "The shell")->required()->check(CLI::IsMember(CompletionShells()));
  return [c, &root, shell]() -> int {
    if (!c->parsed()) return -1;
    auto script = CompletionScript(root, *shell);
    if (!script) {
      std::cerr << "gpuwatch completion: " << script.error().message() << "\n";
      return kExitUsage;
    }
    std::cout << *script;
    return kExitOk;
  };
}

Runner AddManCommand(CLI::App& root) {
  CLI::App* m = root.add_subcommand(
      "man", "Print the gpuwatch(1) man page in roff (gpuwatch man | man -l -)");
  return [m, &root]() -> int {
    if (!m->parsed()) return -1;
    std::cout << ManPage(root, GPUWATCH_VERSION);
    return kExitOk;
  };
}

}  // namespace

std::unique_ptr<Cli> BuildCli() {
  auto cli = BuildCliWith([](CLI::App& app, const CommonArgs& common) -> std::vector<Runner> {
    return {AddQueryCommand(app, common),
            AddDoctorCommand(app, common),
            AddWatchCommand(app, common),
            AddRunCommand(app, common),
            AddSweepCommand(app, common),
            AddReportCommand(app, common),
            AddServeCommand(app, common),
            AddSelectCommand(app, common),
            AddTopCommand(app, common, ParseTopRemote),
            AddCompletionCommand(app),
            AddManCommand(app)};
  });
  cli->help_hints = ConfigureHelp(cli->app);
  return cli;
}

}  // namespace gpuwatch::cli
