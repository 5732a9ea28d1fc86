// gpuwatch: the one-shot front (cli/oneshot_cli.h). Status, query and select
// run here; top runs as gpuwatch-top and anything else as gpuwatch-full, with
// the same arguments.
#include <exception>
#include <iostream>

#include "cli/oneshot_cli.h"

int main(int argc, char** argv) {
  using namespace gpuwatch::cli;
  try {
    std::unique_ptr<Cli> cli = BuildOneShotCli();
    const FrontDecision d = ParseOneShot(*cli, {argv + (argc > 0 ? 1 : 0), argv + argc});
    switch (d.action) {
      case FrontDecision::Action::kExit:
        return d.code;
      case FrontDecision::Action::kDelegate:
        cli.reset();
        return ExecBeside(d.binary, argv);
      case FrontDecision::Action::kRun:
        break;
    }
    return RunCli(*cli);
  } catch (const std::exception& e) {
    std::cerr << "gpuwatch: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}
