#include "cli/oneshot_cli.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "engine/source.h"

namespace gpuwatch::cli {

std::unique_ptr<Cli> BuildOneShotCli() {
  return BuildCliWith([](CLI::App& app, const CommonArgs& common) -> std::vector<Runner> {
    std::vector<Runner> runners = {AddQueryCommand(app, common), AddSelectCommand(app, common)};
    for (std::string_view name : kDelegatedCommands) {
      // Any arguments: gpuwatch-full parses them.
      app.add_subcommand(std::string(name))->prefix_command()->allow_extras();
    }
    return runners;
  });
}

FrontDecision ParseOneShot(Cli& cli, const std::vector<std::string>& argv) {
  using Action = FrontDecision::Action;
  constexpr int kDelegate = -2;
  const int code = ParseCliWith(cli, argv, [&cli](const CLI::ParseError* e, const std::string&) {
    if (e != nullptr && dynamic_cast<const CLI::CallForVersion*>(e) != nullptr) {
      return cli.app.exit(*e);
    }
    return kDelegate;
  });
  // A delegated command goes to its executable also when the front cannot
  // parse what follows it (`top -i 1s`: the front's -i is the GPU's).
  for (std::string_view name : kDelegatedCommands) {
    if (cli.app.got_subcommand(std::string(name))) {
      return {Action::kDelegate, 0, name == "top" ? kTopBinary : kFullBinary};
    }
  }
  if (code == kDelegate) return {Action::kDelegate, 0};
  if (code >= 0) return {Action::kExit, code};
  // A recording may be a SQLite history, which the front does not read.
  if (!cli.common.replay.empty()) return {Action::kDelegate, 0};
  return {Action::kRun, 0};
}

int ExecBeside(const char* binary, char** argv) {
  const std::string path = engine::ExeDir() + "/" + binary;
  execv(path.c_str(), argv);
  if (std::string_view(binary) != kFullBinary) return ExecBeside(kFullBinary, argv);
  std::cerr << "gpuwatch: cannot start " << path << ": " << std::strerror(errno)
            << "\ngpuwatch: status, query and select are in gpuwatch itself; every other "
               "command, and help, is in gpuwatch-full, installed beside it\n";
  return kExitFailure;
}

}  // namespace gpuwatch::cli
