// NormalizeArgs (cli/commands.h): the one pass over argv before CLI11.
#include <fmt/format.h>

#include "cli/commands.h"

namespace gpuwatch::cli {

Result<Arguments> NormalizeArgs(int argc, char** argv) {
  Arguments out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      out.command.emplace(argv + i + 1, argv + argc);
      break;
    }
    if (a == "-lms") {
      a = "--loop-ms";
    } else if (a.starts_with("-lms=")) {
      a = "--loop-ms=" + a.substr(5);
    }
    if (a.size() > 3 && a.starts_with("--") && a.back() == '=' && a.find('=') == a.size() - 1) {
      return Status::InvalidArgument(fmt::format("{} is empty: give its value after the '='", a));
    }
    out.options.push_back(std::move(a));
  }
  return out;
}

}  // namespace gpuwatch::cli
