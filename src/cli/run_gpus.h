// Which GPUs `gpuwatch run` gives its job: the ones --gpus names (indices or
// UUIDs), or with --gpus auto:N the N a claim grants and leases until the
// job ends (docs/select.md). Either way the job gets CUDA_VISIBLE_DEVICES
// in PCI order (NVML's), and `job.cuda_to_nvml` maps what it calls device k
// back to the NVML index its framework memory is reported under.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/job/job_summary.h"
#include "cli/claim_options.h"
#include "cli/terminal.h"
#include "engine/job_session.h"

namespace gpuwatch::cli {

// "auto" or "auto:N": how many GPUs to choose and lease; nullopt when
// --gpus names GPUs itself.
Result<std::optional<int>> AutoCount(const std::string& spec);

// The claim of --gpus auto:N: leased, held by this process (and later the
// job), named after the user and the command.
Result<ClaimRequest> RunClaimRequest(ClaimOptions options, int count,
                                     const std::vector<std::string>& command);

// Claims the GPUs (waiting when asked, saying so on stderr) into `job`'s
// environment, `held` and `lease`; an exit status when the job must not
// start (refused, timed out, interrupted).
std::optional<int> GrantClaim(Source& source, const ClaimRequest& claim, bool quiet,
                              Terminal& terminal, engine::JobOptions& job,
                              std::optional<HeldLeases>& held, std::optional<JobLease>& lease);

// --gpus 0,2 or UUIDs, checked against the GPUs there are (when known),
// into `job`'s environment.
Status NamedGpus(const std::string& spec, std::optional<int> device_count, engine::JobOptions& job);

}  // namespace gpuwatch::cli
