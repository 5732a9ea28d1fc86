// The one-shot front: the `gpuwatch` executable people type most often
// (status, query, select) holds only those commands, so it starts without
// the libraries the others load (cpp-httplib and OpenSSL, SQLite, yaml-cpp,
// ncurses). Everything else, help included, is gpuwatch-full's: installed
// beside it, started in its place with the same arguments (execv, so the
// process, its pid and its signals stay the same). `top` starts gpuwatch-top
// (top_cli.h), which holds that command without HTTP, TLS and SQLite.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_app.h"

namespace gpuwatch::cli {

// The executables installed beside `gpuwatch`.
inline constexpr const char* kFullBinary = "gpuwatch-full";
inline constexpr const char* kTopBinary = "gpuwatch-top";

// The subcommands the front leaves to gpuwatch-full: every subcommand of the
// full tree but query, select and version (a test checks the two trees
// agree). The front knows their names only, to tell them from a mistake.
inline constexpr std::array<std::string_view, 9> kDelegatedCommands = {
    "doctor", "watch", "run", "sweep", "report", "serve", "top", "completion", "man"};

// The front's tree: BuildCliWith's root (status, the common options,
// version) with query and select, and each delegated command as a name that
// takes any arguments.
std::unique_ptr<Cli> BuildOneShotCli();

// What the front does with its arguments.
struct FrontDecision {
  enum class Action {
    kRun,       // a one-shot command, parsed into the Cli: RunCli
    kExit,      // done (the version was printed): exit with `code`
    kDelegate,  // `binary`'s: another command, help, --replay (the
                // front reads no SQLite history), or anything the front
                // cannot parse (gpuwatch-full says what is wrong)
  };
  Action action = Action::kRun;
  int code = 0;
  const char* binary = kFullBinary;
};
FrontDecision ParseOneShot(Cli& cli, const std::vector<std::string>& argv);

// Replaces this process with `binary` (one of the above, beside the running
// executable), `argv` unchanged; gpuwatch-full where gpuwatch-top is missing.
// Returns only when that fails: the exit status, after saying what is missing.
int ExecBeside(const char* binary, char** argv);
inline int ExecFull(char** argv) { return ExecBeside(kFullBinary, argv); }

}  // namespace gpuwatch::cli
