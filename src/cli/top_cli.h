// gpuwatch-top: `gpuwatch top` for this machine's GPUs, the demo fleet and
// scenarios, the view people keep open all day. It holds that command only,
// so it starts without HTTP, TLS and SQLite (cpp-httplib sets OpenSSL up as
// it loads: megabytes resident before main). The front (`gpuwatch`,
// oneshot_cli.h) starts it for `top`; it hands to gpuwatch-full whatever
// needs more: --remote and --prometheus (HTTP), --replay (a recording may be
// a SQLite history), a --rules file with a webhook action, help, and anything
// it cannot parse.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/cli_app.h"
#include "cli/oneshot_cli.h"
#include "cli/top_remote.h"

namespace gpuwatch::cli {

// Checks --remote / --prometheus and returns what starts their feed.
using ParseRemote = std::function<Result<StartTopFeed>(const TopRemoteArgs&)>;

// The `top` subcommand. `parse_remote`: gpuwatch-full's ParseTopRemote;
// without one (gpuwatch-top) --remote and --prometheus are refused, which
// gpuwatch-top never meets since it hands them to gpuwatch-full.
Runner AddTopCommand(CLI::App& app, const CommonArgs& common, ParseRemote parse_remote);

// BuildCliWith's root with `top` alone.
std::unique_ptr<Cli> BuildTopCli();

// kRun when `argv` is a top command gpuwatch-top can run, kDelegate otherwise.
FrontDecision ParseTopOnly(Cli& cli, const std::vector<std::string>& argv);

}  // namespace gpuwatch::cli
