#include "cli/run_gpus.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

namespace gpuwatch::cli {
namespace {

// "0,2" or UUIDs, checked against the GPUs there are (when they are known).
Result<std::string> VisibleDevices(const std::string& spec, std::optional<int> device_count) {
  std::string out;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const auto comma = spec.find(',', start);
    const std::string item =
        spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      return Status::InvalidArgument(fmt::format("--gpus \"{}\": empty entry", spec));
    const bool index = item.find_first_not_of("0123456789") == std::string::npos;
    if (index && item.size() > 4) {
      return Status::InvalidArgument(fmt::format("--gpus: there is no GPU {}", item));
    }
    if (index && device_count && std::stoul(item) >= static_cast<unsigned long>(*device_count)) {
      return Status::InvalidArgument(
          fmt::format("--gpus: there is no GPU {} (this machine has {})", item, *device_count));
    }
    if (!index && !(item.starts_with("GPU-") || item.starts_with("MIG-"))) {
      return Status::InvalidArgument(
          fmt::format("--gpus: \"{}\" is neither an index nor a GPU-/MIG- UUID", item));
    }
    out += (out.empty() ? "" : ",") + item;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

Result<std::optional<int>> AutoCount(const std::string& spec) {
  if (spec != "auto" && !spec.starts_with("auto:")) return std::optional<int>();
  if (spec == "auto") return std::optional<int>(1);
  const std::string n = spec.substr(5);
  char* end = nullptr;
  const long v = std::strtol(n.c_str(), &end, 10);
  if (n.empty() || end != n.c_str() + n.size() || v < 1 || v > 4096) {
    return Status::InvalidArgument(
        fmt::format("--gpus \"{}\": expected auto:N with N from 1 to 4096", spec));
  }
  return std::optional<int>(static_cast<int>(v));
}

Result<ClaimRequest> RunClaimRequest(ClaimOptions options, int count,
                                     const std::vector<std::string>& command) {
  options.count = count;
  auto request = BuildClaimRequest(options);
  if (!request) return request.error();
  request->lease = true;
  auto me = host::ProcessLiveness("/proc").Identify(static_cast<std::uint32_t>(getpid()));
  if (!me) return me.error();
  request->holders = {*me};
  request->user = CurrentUser();
  for (const auto& a : command) request->command += (request->command.empty() ? "" : " ") + a;
  return request;
}

std::optional<int> GrantClaim(Source& source, const ClaimRequest& claim, bool quiet,
                              Terminal& terminal, engine::JobOptions& job,
                              std::optional<HeldLeases>& held, std::optional<JobLease>& lease) {
  auto outcome = ClaimGpus(source, claim, "gpuwatch run", std::cerr, quiet);
  if (!outcome) {
    std::cerr << "gpuwatch run: " << outcome.error().message() << "\n";
    return ExitStatusFor(outcome.error());
  }
  if (outcome->kind != ClaimOutcome::Kind::kGranted) {
    return ExplainRefusal("gpuwatch run", claim, *outcome, std::cerr);
  }
  held.emplace(MachineLeaseBook(), outcome->ticket);
  lease.emplace();
  for (const auto& c : outcome->choice.chosen) lease->devices.push_back(c.id);
  lease->ticket = outcome->ticket;
  lease->granted = outcome->granted;
  lease->waited = std::chrono::duration_cast<std::chrono::milliseconds>(outcome->waited);
  job.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  job.env["CUDA_VISIBLE_DEVICES"] = DeviceList(outcome->choice, false);
  for (const auto& c : outcome->choice.chosen) job.cuda_to_nvml.push_back(c.index);
  if (!quiet) {
    terminal.Line(fmt::format("leased GPU {} until the job ends (ticket #{})",
                              DeviceList(outcome->choice, false), outcome->ticket));
  }
  return std::nullopt;
}

Status NamedGpus(const std::string& spec, std::optional<int> device_count,
                 engine::JobOptions& job) {
  auto visible = VisibleDevices(spec, device_count);
  if (!visible) return visible.error();
  // CUDA numbers GPUs fastest-first unless told to use PCI order, which is NVML's.
  job.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  job.env["CUDA_VISIBLE_DEVICES"] = *visible;
  if (visible->find_first_not_of("0123456789,") == std::string::npos) {
    for (std::size_t at = 0; at < visible->size();) {  // indices only; UUIDs stay unmapped
      const auto comma = visible->find(',', at);
      job.cuda_to_nvml.push_back(std::stoi(visible->substr(at, comma - at)));
      at = comma == std::string::npos ? visible->size() : comma + 1;
    }
  }
  return Status::Ok();
}

}  // namespace gpuwatch::cli
