#include "cli/claim_options.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <ostream>

#include "engine/signals.h"
#include "gpuwatch/units.h"
#include "sampler/collect.h"

namespace gpuwatch::cli {
namespace {

// "30", "30%" or "30 %" -> 0.30; an error names the option.
Result<double> Percent(std::string_view option, std::string text) {
  while (!text.empty() && (text.back() == '%' || text.back() == ' ')) text.pop_back();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v >= 0 && v <= 100)) {
    return Status::InvalidArgument(fmt::format(
        "{} \"{}\": expected a percentage from 0 to 100 (e.g. 30 or 30%)", option, text));
  }
  return v / 100.0;
}

Result<std::set<int>> Indices(std::string_view text) {
  std::set<int> out;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string entry(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    char* end = nullptr;
    const long v = std::strtol(entry.c_str(), &end, 10);
    if (entry.empty() || end != entry.c_str() + entry.size() || v < 0 || v > 4096) {
      return Status::InvalidArgument(
          fmt::format("--exclude \"{}\": \"{}\" is not a GPU index", text, entry));
    }
    out.insert(static_cast<int>(v));
  }
  return out;
}

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::string Seconds(std::chrono::steady_clock::duration d) {
  return fmt::format("{:.1f} s", std::chrono::duration<double>(d).count());
}

}  // namespace

void AddClaimOptions(CLI::App& app, ClaimOptions& o) {
  app.add_option("--min-free", o.min_free, "At least this much free memory (e.g. 20GiB)");
  app.add_option("--max-util", o.max_util, "At most this GPU utilization (e.g. 30%)");
  app.add_option("--max-memory-util", o.max_memory_util,
                 "At most this share of memory in use (e.g. 50%)");
  app.add_option("--exclude", o.exclude, "NVML indices never to choose (e.g. 0,3)");
  app.add_option("--order", o.order, "load (default), memory, index or random");
  app.add_option("--account-as-free", o.free_users,
                 "Count this user's GPU memory as free (repeatable)");
  o.wait = app.add_option("--wait", o.wait_timeout,
                          "Queue until enough GPUs qualify, first come first served; "
                          "optionally at most TIMEOUT (e.g. 30m)")
               ->expected(0, 1);
}

bool AnyLimit(const ClaimOptions& o) {
  return !o.min_free.empty() || !o.max_util.empty() || !o.max_memory_util.empty() ||
         !o.exclude.empty() || o.order != "load" || !o.free_users.empty() ||
         (o.wait != nullptr && o.wait->count() > 0);
}

Result<ClaimRequest> BuildClaimRequest(const ClaimOptions& o) {
  ClaimRequest r;
  select::Criteria& c = r.criteria;
  if (o.count < 1 || o.count > 4096) {
    return Status::InvalidArgument(fmt::format("--count {}: expected 1 to 4096", o.count));
  }
  c.count = o.count;
  if (!o.min_free.empty()) {
    auto size = ParseSize(o.min_free);
    if (!size) return Status::InvalidArgument("--min-free: " + size.error().message());
    c.min_free_bytes = static_cast<double>(*size);
  }
  if (!o.max_util.empty()) {
    auto p = Percent("--max-util", o.max_util);
    if (!p) return p.error();
    c.max_utilization = *p;
  }
  if (!o.max_memory_util.empty()) {
    auto p = Percent("--max-memory-util", o.max_memory_util);
    if (!p) return p.error();
    c.max_memory_utilization = *p;
  }
  if (!o.exclude.empty()) {
    auto ex = Indices(o.exclude);
    if (!ex) return ex.error();
    c.exclude = *ex;
  }
  auto order = select::ParseOrder(o.order);
  if (!order) return order.error();
  c.order = *order;
  c.free_users = {o.free_users.begin(), o.free_users.end()};
  c.seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count() ^
                                      getpid());
  if (o.wait != nullptr && o.wait->count() > 0) {
    r.wait = true;
    r.lease = true;  // waiting without taking would hand the GPUs to whoever comes next
    if (!o.wait_timeout.empty()) {
      auto t = ParseDuration(o.wait_timeout);
      if (!t) return Status::InvalidArgument("--wait: " + t.error().message());
      r.timeout = *t;
    }
  }
  r.cuda_visible_devices = Env("CUDA_VISIBLE_DEVICES");
  r.cuda_device_order = Env("CUDA_DEVICE_ORDER");
  return r;
}

Result<ClaimOutcome> ClaimGpus(Source& source, const ClaimRequest& request,
                               const std::string& command_name, std::ostream& err, bool quiet) {
  const bool tty = &err == &std::cerr && isatty(STDERR_FILENO) != 0;
  bool open_line = false;
  const auto progress = [&](const std::string& line) {
    if (quiet) return;
    if (tty) {
      err << "\r\033[K" << command_name << ": " << line << std::flush;
      open_line = true;
    } else {
      err << command_name << ": " << line << "\n" << std::flush;
    }
  };
  const CollectOptions collect = engine::ChoosingReads(request.criteria);
  const auto read_gpus = [&source, collect] {
    return CollectOnce(*source.backend, source.resolver.get(), collect);
  };
  const host::LeaseBook book = MachineLeaseBook();
  auto outcome = Claim(request, book, read_gpus, progress, engine::PendingSignal);
  if (open_line) err << "\n";
  if (outcome && !outcome->warning.empty()) {
    err << command_name << ": warning: " << outcome->warning << "\n";
  }
  if (outcome && !quiet && outcome->kind == ClaimOutcome::Kind::kGranted && request.wait &&
      outcome->waited > std::chrono::seconds(1)) {
    err << command_name << ": got " << DeviceList(outcome->choice, false) << " after waiting "
        << Seconds(outcome->waited) << "\n";
  }
  return outcome;
}

int ExplainRefusal(const std::string& command_name, const ClaimRequest& request,
                   const ClaimOutcome& outcome, std::ostream& err) {
  using Kind = ClaimOutcome::Kind;
  const std::string wants = Wants(request.criteria);
  switch (outcome.kind) {
    case Kind::kGranted:
      return kExitOk;
    case Kind::kQueueAhead:
      err << fmt::format(
          "{}: {} job{} already wait{} for GPUs on this machine; add --wait to queue behind "
          "them\n",
          command_name, outcome.ahead, outcome.ahead == 1 ? "" : "s",
          outcome.ahead == 1 ? "s" : "");
      return kExitFailure;
    case Kind::kTimedOut:
      err << fmt::format("{}: gave up after {} waiting for {} ({} in the queue); not started\n",
                         command_name, Seconds(outcome.waited), wants,
                         outcome.ahead == 0 ? "first" : fmt::format("{} ahead", outcome.ahead));
      return kExitTimedOut;
    case Kind::kInterrupted:
      err << fmt::format("{}: left the queue (signal {}) after {}; not started\n", command_name,
                         outcome.signal, Seconds(outcome.waited));
      return 128 + outcome.signal;
    case Kind::kTooFew:
      break;
  }
  const std::size_t n = outcome.choice.chosen.size();
  err << fmt::format("{}: {} asked, {} qualif{}:\n", command_name, wants, n, n == 1 ? "ies" : "y");
  for (const auto& cand : outcome.choice.candidates) {
    std::string why;
    for (const auto& r : cand.reasons) why += (why.empty() ? "" : "; ") + r;
    err << fmt::format("  GPU {}: {}\n", cand.id, why.empty() ? "qualifies" : why);
  }
  return kExitFailure;
}

}  // namespace gpuwatch::cli
