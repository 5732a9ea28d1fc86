// `gpuwatch serve` in a build without cpp-httplib: the command exists and
// says what is missing.
#include <iostream>

#include "cli/commands.h"

namespace gpuwatch::cli {

Runner AddServeCommand(CLI::App& app, const CommonArgs&) {
  CLI::App* s = app.add_subcommand("serve", "The daemon (not in this build: no cpp-httplib)");
  s->allow_extras();
  return [s]() -> int {
    if (!s->parsed()) return -1;
    std::cerr << "gpuwatch serve: this gpuwatch was built without cpp-httplib, so it cannot "
                 "serve HTTP: apt-get install libcpp-httplib-dev and build again\n";
    return kExitFailure;
  };
}

}  // namespace gpuwatch::cli
