// gpuwatch-top: `top` without the libraries only other commands use
// (cli/top_cli.h); anything else runs as gpuwatch-full, with the same
// arguments.
#include <exception>
#include <iostream>

#include "cli/top_cli.h"

int main(int argc, char** argv) {
  using namespace gpuwatch::cli;
  try {
    std::unique_ptr<Cli> cli = BuildTopCli();
    const FrontDecision d = ParseTopOnly(*cli, {argv + (argc > 0 ? 1 : 0), argv + argc});
    if (d.action != FrontDecision::Action::kRun) {
      cli.reset();
      return ExecFull(argv);
    }
    return RunCli(*cli);
  } catch (const std::exception& e) {
    std::cerr << "gpuwatch: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}
