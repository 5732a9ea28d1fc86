#include "cli/cli_app.h"

#include <algorithm>
#include <iostream>

#include "cli/help_option.h"

namespace gpuwatch::cli {
namespace {

// The options `app` got since it had `before` of them.
std::vector<CLI::Option*> OptionsAddedSince(CLI::App& app, std::size_t before) {
  std::vector<CLI::Option*> all = app.get_options({});
  return {all.begin() + static_cast<std::ptrdiff_t>(std::min(before, all.size())), all.end()};
}

}  // namespace

std::unique_ptr<Cli> BuildCliWith(const AddCommands& add_commands) {
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
  cli->status = AddStatusCommand(app, cli->common);
  cli->runners = add_commands(app, cli->common);
  return cli;
}

int ParseCliWith(Cli& cli, const std::vector<std::string>& argv, const ParseFailed& failed) {
  std::vector<char*> c_argv;
  std::string program = "gpuwatch";
  c_argv.push_back(program.data());
  std::vector<std::string> copy = argv;
  for (std::string& a : copy) c_argv.push_back(a.data());
  auto args = NormalizeArgs(static_cast<int>(c_argv.size()), c_argv.data());
  if (!args) return failed(nullptr, args.error().message());
  cli.common.command = std::move(args->command);
  std::reverse(args->options.begin(), args->options.end());  // CLI11 takes them in reverse
  try {
    cli.app.parse(args->options);
  } catch (const CLI::ParseError& e) {
    return failed(&e, e.what());
  }
  if (cli.common.command && !cli.common.command->empty() && !cli.app.got_subcommand("run") &&
      !cli.app.got_subcommand("sweep")) {
    return failed(nullptr, "only `gpuwatch run` and `gpuwatch sweep` take a command after --");
  }
  return -1;
}

int ParseCli(Cli& cli, const std::vector<std::string>& argv) {
  return ParseCliWith(cli, argv, [&cli](const CLI::ParseError* e, const std::string& message) {
    if (e == nullptr) {
      std::cerr << "gpuwatch: " << message << "\n";
      return kExitUsage;
    }
    return cli.app.exit(*e) == 0 ? kExitOk : kExitUsage;
  });
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
