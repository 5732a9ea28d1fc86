// The options `select` and `run --gpus auto:N` share: the limits a GPU must
// meet, --lease and --wait; turning them into a ClaimRequest (errors name the
// option); running the claim against the source's GPUs; and saying how it
// ended. docs/select.md.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/context.h"
#include "engine/claim.h"

namespace gpuwatch::cli {

using engine::ClaimOutcome;
using engine::ClaimRequest;
using engine::CurrentUser;
using engine::DeviceList;
using engine::HeldLeases;
using engine::MachineLeaseBook;
using engine::TakenBy;
using engine::Wants;

struct ClaimOptions {
  int count = 1;
  std::string min_free;
  std::string max_util;
  std::string max_memory_util;
  std::string exclude;
  std::string order = "load";
  std::vector<std::string> free_users;
  CLI::Option* wait = nullptr;  // given: queue; its value, if any, is the timeout
  std::string wait_timeout;
};

// Adds --min-free ... --account-as-free and --wait [TIMEOUT] (not -n).
void AddClaimOptions(CLI::App& app, ClaimOptions& options);

// Whether any limit option was given (run accepts them only with auto:N).
bool AnyLimit(const ClaimOptions& options);

// The request, without holders/user/command. InvalidArgument names the
// option and the value.
Result<ClaimRequest> BuildClaimRequest(const ClaimOptions& options);

// Claims through the source's GPUs (one read each time the claim needs
// one). `command_name` prefixes every line gpuwatch prints ("gpuwatch run").
// Wait progress goes to `err` unless `quiet`: rewritten in place on a
// terminal, a line per change otherwise.
Result<ClaimOutcome> ClaimGpus(Source& source, const ClaimRequest& request,
                               const std::string& command_name, std::ostream& err, bool quiet);

// When the outcome is not kGranted: says why on `err`, per GPU where that
// helps, and returns the exit status (1 too few or queue ahead, 75 timed
// out, 128 + signal interrupted).
int ExplainRefusal(const std::string& command_name, const ClaimRequest& request,
                   const ClaimOutcome& outcome, std::ostream& err);

// The exit status for a wait that timed out (EX_TEMPFAIL: try again later).
inline constexpr int kExitTimedOut = 75;

}  // namespace gpuwatch::cli
