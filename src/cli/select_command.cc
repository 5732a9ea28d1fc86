// `gpuwatch select`: the least busy GPUs for the next job, printed as
// indices, UUIDs or environment assignments; exit 1 saying, per GPU, why it
// was not chosen when too few qualify. docs/select.md.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iostream>

#include "cli/claim_options.h"
#include "cli/commands.h"
#include "engine/hang_report.h"
#include "engine/signals.h"
#include "host/proc_files.h"
#include "host/proc_parse.h"

namespace gpuwatch::cli {
namespace {

struct SelectArgs {
  ClaimOptions claim;
  std::string format = "index";
  bool lease = false;
  std::uint32_t lease_owner = 0;
  bool release = false;
};

std::string CommandOf(std::uint32_t pid) {
  const std::string dir = fmt::format("/proc/{}/", pid);
  auto cmdline = host::ReadWholeFile(dir + "cmdline");
  auto comm = host::ReadWholeFile(dir + "comm");
  std::string name = comm ? *comm : std::string();
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return host::CommandLine(cmdline ? *cmdline : std::string(), name);
}

// --release: gives back every lease `owner` holds.
int Release(const ProcessKey& owner) {
  int released = 0;
  const Status s = MachineLeaseBook().Update([&](host::LeaseTable& t) {
    const std::size_t before = t.leases.size();
    std::erase_if(t.leases, [&](const host::Lease& l) {
      return std::find(l.holders.begin(), l.holders.end(), owner) != l.holders.end();
    });
    released = static_cast<int>(before - t.leases.size());
  });
  if (!s.ok()) {
    std::cerr << "gpuwatch select: " << s.message() << "\n";
    return kExitFailure;
  }
  std::cerr << fmt::format("gpuwatch select: released {} lease{} of pid {}\n", released,
                           released == 1 ? "" : "s", owner.pid);
  return kExitOk;
}

int RunSelect(const CommonArgs& common, const SelectArgs& args) {
  auto request = BuildClaimRequest(args.claim);
  if (!request) return UsageError("select", request.error().message());
  if (args.format != "index" && args.format != "uuid" && args.format != "env") {
    return UsageError("select",
                      fmt::format("--format \"{}\": must be index, uuid or env", args.format));
  }
  request->lease = request->lease || args.lease;
  if (args.lease_owner != 0 && !request->lease && !args.release) {
    return UsageError("select", "--lease-owner needs --lease, --wait or --release");
  }
  if (request->lease || args.release) {
    // The lease belongs to whoever asked: the shell or script that runs
    // `select` (its parent), or --lease-owner.
    const std::uint32_t pid =
        args.lease_owner != 0 ? args.lease_owner : static_cast<std::uint32_t>(getppid());
    auto holder = host::ProcessLiveness("/proc").Identify(pid);
    if (!holder)
      return UsageError("select",
                        fmt::format("--lease-owner {}: {}", pid, holder.error().message()));
    if (args.release) return Release(*holder);
    request->holders = {*holder};
    request->user = CurrentUser();
    request->command = CommandOf(pid);
  }

  const engine::HangReport hangs;  // a driver that never answers is said, not silent
  auto source = OpenSource(OneShotSource(common));
  if (!source) {
    std::cerr << "gpuwatch: " << source.error().message() << "\n";
    return ExitStatusFor(source.error());
  }
  engine::CatchSignals({SIGINT, SIGTERM, SIGHUP});
  auto outcome = ClaimGpus(*source, *request, "gpuwatch select", std::cerr, false);
  if (!outcome) {
    std::cerr << "gpuwatch select: " << outcome.error().message() << "\n";
    return ExitStatusFor(outcome.error());
  }
  if (outcome->kind != ClaimOutcome::Kind::kGranted) {
    return ExplainRefusal("gpuwatch select", *request, *outcome, std::cerr);
  }
  const std::string list = DeviceList(outcome->choice, args.format == "uuid");
  if (args.format == "env") {
    std::cout << "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=" << list << "\n";
  } else {
    std::cout << list << "\n";
  }
  return kExitOk;
}

}  // namespace

Runner AddSelectCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<SelectArgs>();
  CLI::App* s =
      app.add_subcommand("select", "The least busy GPUs for the next job (docs/select.md)");
  s->add_option("-n,--count", args->claim.count, "How many GPUs (default 1)");
  AddClaimOptions(*s, args->claim);
  s->add_option("--format", args->format,
                "index (default), uuid, or env (CUDA_DEVICE_ORDER=... CUDA_VISIBLE_DEVICES=...)");
  s->add_flag("--lease", args->lease,
              "Reserve the GPUs chosen for the calling process (the shell or script), until it "
              "exits or runs select --release");
  s->add_option("--lease-owner", args->lease_owner,
                "The process the lease belongs to (default: select's parent)");
  s->add_flag("--release", args->release, "Give back the leases of the calling process");
  return [s, &common, args]() -> int {
    if (!s->parsed()) return -1;
    return RunSelect(common, *args);
  };
}

}  // namespace gpuwatch::cli
