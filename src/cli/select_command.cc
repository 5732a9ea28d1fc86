// `gpuwatch select`: the least busy GPUs for the next job, printed as
// indices, UUIDs or environment assignments; exit 1 saying, per GPU, why it
// was not chosen when too few qualify. docs/select.md.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "analysis/select/selection.h"
#include "cli/commands.h"
#include "gpuwatch/units.h"
#include "sampler/collect.h"

namespace gpuwatch::cli {
namespace {

struct SelectArgs {
  int count = 1;
  std::string min_free;
  std::string max_util;
  std::string max_memory_util;
  std::string exclude;
  std::string order = "load";
  std::string format = "index";
  std::vector<std::string> free_users;
};

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

int Usage(const std::string& message) {
  std::cerr << "gpuwatch select: " << message << "\n";
  return kExitUsage;
}

std::optional<std::string_view> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string_view(v);
}

int RunSelect(const CommonArgs& common, const SelectArgs& args) {
  select::Criteria c;
  if (args.count < 1) return Usage(fmt::format("--count {}: must be at least 1", args.count));
  c.count = args.count;
  if (!args.min_free.empty()) {
    auto size = ParseSize(args.min_free);
    if (!size) return Usage("--min-free: " + size.error().message());
    c.min_free_bytes = static_cast<double>(*size);
  }
  if (!args.max_util.empty()) {
    auto p = Percent("--max-util", args.max_util);
    if (!p) return Usage(p.error().message());
    c.max_utilization = *p;
  }
  if (!args.max_memory_util.empty()) {
    auto p = Percent("--max-memory-util", args.max_memory_util);
    if (!p) return Usage(p.error().message());
    c.max_memory_utilization = *p;
  }
  if (!args.exclude.empty()) {
    auto ex = Indices(args.exclude);
    if (!ex) return Usage(ex.error().message());
    c.exclude = *ex;
  }
  auto order = select::ParseOrder(args.order);
  if (!order) return Usage(order.error().message());
  c.order = *order;
  if (args.format != "index" && args.format != "uuid" && args.format != "env") {
    return Usage(fmt::format("--format \"{}\": must be index, uuid or env", args.format));
  }
  c.free_users = {args.free_users.begin(), args.free_users.end()};
  c.seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count() ^
                                      getpid());

  auto source = OpenSource(common);
  if (!source) {
    std::cerr << "gpuwatch: " << source.error().message() << "\n";
    return ExitStatusFor(source.error());
  }
  auto resolver = source->resolver.get();
  const Snapshot snap = CollectOnce(*source->backend, resolver, CollectOptions{});
  auto visible =
      select::VisibleIndices(Env("CUDA_VISIBLE_DEVICES"), Env("CUDA_DEVICE_ORDER"), snap);
  if (!visible) return Usage(visible.error().message());
  const select::Choice choice = select::Choose(snap, c, *visible);
  if (static_cast<int>(choice.chosen.size()) < c.count) {
    std::cerr << fmt::format("gpuwatch select: {} GPU{} asked, {} qualif{}:\n", c.count,
                             c.count == 1 ? "" : "s", choice.chosen.size(),
                             choice.chosen.size() == 1 ? "ies" : "y");
    for (const auto& cand : choice.candidates) {
      std::string why;
      for (const auto& r : cand.reasons) why += (why.empty() ? "" : "; ") + r;
      std::cerr << fmt::format("  GPU {}: {}\n", cand.index, why.empty() ? "qualifies" : why);
    }
    return kExitFailure;
  }
  std::string list;
  for (const auto& cand : choice.chosen) {
    if (!list.empty()) list += ",";
    list += args.format == "uuid" ? cand.uuid : std::to_string(cand.index);
  }
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
  s->add_option("-n,--count", args->count, "How many GPUs (default 1)");
  s->add_option("--min-free", args->min_free, "At least this much free memory (e.g. 20GiB)");
  s->add_option("--max-util", args->max_util, "At most this GPU utilization (e.g. 30%)");
  s->add_option("--max-memory-util", args->max_memory_util,
                "At most this share of memory in use (e.g. 50%)");
  s->add_option("--exclude", args->exclude, "NVML indices never to choose (e.g. 0,3)");
  s->add_option("--order", args->order, "load (default), memory, index or random");
  s->add_option("--format", args->format,
                "index (default), uuid, or env (CUDA_DEVICE_ORDER=... CUDA_VISIBLE_DEVICES=...)");
  s->add_option("--account-as-free", args->free_users,
                "Count this user's GPU memory as free (repeatable)");
  return [s, &common, args]() -> int {
    if (!s->parsed()) return -1;
    return RunSelect(common, *args);
  };
}

}  // namespace gpuwatch::cli
