#include "cli/cli_app.h"

#include <algorithm>
#include <iostream>

#include "cli/completion.h"
#include "cli/help_format.h"
#include "cli/help_option.h"
#include "cli/manpage.h"

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

// The options `app` got since it had `before` of them.
std::vector<CLI::Option*> OptionsAddedSince(CLI::App& app, std::size_t before) {
  std::vector<CLI::Option*> all = app.get_options({});
  return {all.begin() + static_cast<std::ptrdiff_t>(std::min(before, all.size())), all.end()};
}

}  // namespace

std::unique_ptr<Cli> BuildCli() {
  auto cli = std::make_unique<Cli>();
  CLI::App& app = cli->app;
  // Every option's initial value becomes its default in help and the man
  // page; subcommands inherit this, so it comes before any option.
  app.option_defaults()->always_capture_default();
  const std::string version_text = std::string("gpuwatch ") + GPUWATCH_VERSION;
  app.set_version_flag("-V,--version", version_text);
  cli->version = app.add_subcommand("version", "print gpuwatch's version (as -V, --version)");
  app.require_subcommand(0, 1);
  const std::size_t before_common = app.get_options({}).size();
  AddCommonOptions(app, cli->common);
  for (CLI::Option* o : OptionsAddedSince(app, before_common)) o->group(kGlobalOptionsGroup);
  // Common options are accepted after the subcommand too.
  app.fallthrough();
  const CommonArgs& common = cli->common;
  cli->status = AddStatusCommand(app, common);
  cli->runners = {AddQueryCommand(app, common),
                  AddDoctorCommand(app, common),
                  AddWatchCommand(app, common),
                  AddRunCommand(app, common),
                  AddSweepCommand(app, common),
                  AddReportCommand(app, common),
                  AddServeCommand(app, common),
                  AddSelectCommand(app, common),
                  AddTopCommand(app, common),
                  AddCompletionCommand(app),
                  AddManCommand(app)};
  cli->help_hints = ConfigureHelp(app);
  return cli;
}

int ParseCli(Cli& cli, const std::vector<std::string>& argv) {
  std::vector<char*> c_argv;
  std::string program = "gpuwatch";
  c_argv.push_back(program.data());
  std::vector<std::string> copy = argv;
  for (std::string& a : copy) c_argv.push_back(a.data());
  auto args = NormalizeArgs(static_cast<int>(c_argv.size()), c_argv.data());
  if (!args) {
    std::cerr << "gpuwatch: " << args.error().message() << "\n";
    return kExitUsage;
  }
  cli.common.command = std::move(args->command);
  std::reverse(args->options.begin(), args->options.end());  // CLI11 takes them in reverse
  try {
    cli.app.parse(args->options);
  } catch (const CLI::ParseError& e) {
    const int code = cli.app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (cli.common.command && !cli.common.command->empty() && !cli.app.got_subcommand("run") &&
      !cli.app.got_subcommand("sweep")) {
    std::cerr << "gpuwatch: only `gpuwatch run` and `gpuwatch sweep` take a command after --\n";
    return kExitUsage;
  }
  return -1;
}

int RunCli(Cli& cli) {
  if (cli.version->parsed()) {
    std::cout << "gpuwatch " << GPUWATCH_VERSION << "\n";
    return kExitOk;
  }
  for (const auto& run : cli.runners) {
    if (const int code = run(); code >= 0) return code;
  }
  return cli.status();
}

}  // namespace gpuwatch::cli
