// What every command shares: the source flags (--demo, --scenario,
// --host-proc, --replay), colour, and the exit statuses. Opening a source is
// the engine's (engine/source.h).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/source.h"
#include "sampler/collect.h"

namespace gpuwatch::cli {

using engine::FindDemoAssets;
using engine::Hostname;
using engine::OpenSource;
using engine::OpenWait;
using engine::Source;
using engine::SourceHostname;

struct CommonArgs : engine::SourceOptions {
  std::string color = "auto";
  bool no_daemon = false;  // --no-daemon: one-shot commands read the GPUs themselves
  // Not an option: what followed the first "--" on the command line (the job
  // of `run`), kept from CLI11 (NormalizeArgs); nullopt when there was no "--".
  std::optional<std::vector<std::string>> command;
};

void AddCommonOptions(CLI::App& app, CommonArgs& args);

// engine::OpenSourceWaiting that also gives up when a signal was caught,
// unless `wait` says when to give up itself.
Result<Source> OpenSourceWaiting(const CommonArgs& args, OpenWait wait);

bool UseColor(const CommonArgs& args, int fd = 1);

// The source of a one-shot answer (`gpuwatch`, `query`, `select`): a running
// daemon's latest sample unless --no-daemon (engine::SourceOptions::daemon).
engine::SourceOptions OneShotSource(const CommonArgs& args);

// CollectOnce from `source`. A daemon's answer without a value (or a reason)
// for a field `collect` asks, one the daemon has not read yet, is not
// shown: `source` is reopened to read the GPUs here, and read again. An
// error when that open fails.
Result<Snapshot> CollectAnswer(const CommonArgs& args, Source& source,
                               const CollectOptions& collect);

// Says "gpuwatch COMMAND: MESSAGE" on stderr; returns kExitUsage.
int UsageError(std::string_view command, std::string_view message);

// Exit statuses shared by all commands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// The exit status for a failed OpenSource: bad arguments or a bad recording
// are usage errors (2), everything else a failure (1).
inline int ExitStatusFor(const Status& status) {
  return status.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
}

}  // namespace gpuwatch::cli
