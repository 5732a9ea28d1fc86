// gpuwatch: dispatches to the commands; nothing else lives here.
#include <exception>
#include <iostream>

#include "cli/cli_app.h"

int main(int argc, char** argv) {
  using namespace gpuwatch::cli;
  try {
    std::unique_ptr<Cli> cli = BuildCli();
    if (const int code = ParseCli(*cli, {argv + (argc > 0 ? 1 : 0), argv + argc}); code >= 0)
      return code;
    return RunCli(*cli);
  } catch (const std::exception& e) {
    std::cerr << "gpuwatch: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}
