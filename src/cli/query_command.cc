// `gpuwatch query`: nvidia-smi's --query-gpu / --query-compute-apps language,
// written exactly as nvidia-smi writes it so scripts work unchanged.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/device_filter.h"
#include "engine/hang_report.h"
#include "engine/signals.h"
#include "export/smi_format.h"
#include "gpuwatch/units.h"
#include "sampler/collect.h"

namespace gpuwatch::cli {
namespace {

struct QueryArgs {
  std::string gpu_fields;
  std::string app_fields;
  CLI::Option* gpu_option = nullptr;  // given, even with an empty value
  CLI::Option* app_option = nullptr;
  std::string format = "csv";
  std::string id;
  std::string loop;  // -l: a duration, plain numbers are seconds as in nvidia-smi
  CLI::Option* loop_ms_option = nullptr;
  long long loop_ms = 0;
  bool help_gpu = false;
};

// nvidia-smi follows a bad field with an empty line, a bad format without.
int Fail(const std::string& message, int code, bool blank_line = true) {
  std::cerr << message << (blank_line ? "\n\n" : "\n");
  return code;
}

// The time between rounds: -l (ParseDuration, more than 0) or -lms; zero
// without either.
Result<std::chrono::milliseconds> LoopPeriod(const QueryArgs& args) {
  if (args.loop_ms_option->count() > 0) {
    if (args.loop_ms <= 0 || args.loop_ms > kLongestDuration.count()) {
      return Status::InvalidArgument(fmt::format("--loop-ms {}: expected 1 to {} milliseconds",
                                                 args.loop_ms, kLongestDuration.count()));
    }
    return std::chrono::milliseconds(args.loop_ms);
  }
  if (args.loop.empty()) return std::chrono::milliseconds(0);
  auto period = ParseDuration(args.loop);
  if (!period) return period.error().WithContext("-l/--loop");
  if (period->count() <= 0) {
    return Status::InvalidArgument(fmt::format(
        "-l/--loop \"{}\": the interval must be more than 0 (e.g. -l 5 or -l 500ms)", args.loop));
  }
  return period;
}

int RunQuery(const CommonArgs& common, const QueryArgs& args) {
  if (args.help_gpu) {
    std::cout << smi::HelpQueryGpu();
    return kExitOk;
  }
  struct FieldList {
    const CLI::Option* option;
    const std::string& fields;
    std::string_view example;
  };
  for (const FieldList& l : {FieldList{args.gpu_option, args.gpu_fields, "index,memory.used"},
                             FieldList{args.app_option, args.app_fields, "pid,used_memory"}}) {
    if (l.option->count() > 0 && l.fields.empty()) {
      return Fail(fmt::format("gpuwatch query: {} is empty: name the fields to query, e.g. {}={} "
                              "(--help-query-gpu lists the GPU fields)",
                              l.option->get_name(), l.option->get_name(), l.example),
                  kExitUsage, false);
    }
  }
  const bool apps = !args.app_fields.empty();
  if (apps == !args.gpu_fields.empty()) {
    return Fail(
        "gpuwatch query: give exactly one of --query-gpu=FIELDS or --query-compute-apps=FIELDS",
        kExitUsage);
  }
  auto format = smi::ParseFormat(args.format);
  if (!format) return Fail(format.error().message(), kExitUsage, false);
  auto columns = apps ? smi::ParseAppFields(args.app_fields) : smi::ParseGpuFields(args.gpu_fields);
  if (!columns) return Fail(columns.error().message(), kExitUsage);
  auto loop = LoopPeriod(args);
  if (!loop) return Fail("gpuwatch query: " + loop.error().message(), kExitUsage, false);
  const std::chrono::milliseconds period = *loop;

  const engine::HangReport hangs;  // a driver that never answers is said, not silent
  auto source = OpenSource(OneShotSource(common));
  if (!source) return Fail("gpuwatch: " + source.error().message(), ExitStatusFor(source.error()));
  // stdout stays pure CSV; the note goes to stderr.
  if (const std::string banner = engine::SourceBanner(*source); !banner.empty()) {
    std::cerr << "gpuwatch query: note: " << banner << "\n";
  }

  // Read only what was asked for: a query is a one-shot hot path.
  CollectOptions collect;
  collect.fields.reset();
  for (const auto& c : *columns) {
    if (c.field) Set(collect.fields, *c.field);
  }
  collect.fields |= FieldsToSelect(args.id);
  collect.processes = apps;
  collect.mig = false;

  if (period.count() > 0) {
    engine::CatchSignals();
  }
  bool first = true;
  auto next = std::chrono::steady_clock::now();
  do {
    auto collected = CollectAnswer(common, *source, collect);
    if (!collected)
      return Fail("gpuwatch: " + collected.error().message(), ExitStatusFor(collected.error()));
    const Snapshot& snap = *collected;
    auto selected = SelectDevices(args.id, snap);
    if (!selected) return Fail(selected.error().message(), kExitUsage);
    std::string out;
    if (first && format->header) out += smi::Header(*columns, *format) + "\n";
    first = false;
    for (std::size_t i : *selected) {
      const DeviceSample& d = snap.devices[i];
      if (!apps) {
        out += smi::GpuRow(*columns, *format, snap, d) + "\n";
        continue;
      }
      for (const auto& p : d.processes) {
        if (p.type == ProcessSample::Type::kGraphics) continue;
        out += smi::AppRow(*columns, *format, snap, d, p) + "\n";
      }
    }
    std::cout << out << std::flush;
    if (period.count() == 0) break;
    next += period;
    while (engine::PendingSignal() == 0 && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          next - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
    }
  } while (engine::PendingSignal() == 0);
  return kExitOk;
}

}  // namespace

Runner AddQueryCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<QueryArgs>();
  CLI::App* q = app.add_subcommand(
      "query", "nvidia-smi compatible queries (--query-gpu, --query-compute-apps)");
  args->gpu_option = q->add_option("--query-gpu", args->gpu_fields,
                                   "Comma-separated GPU fields (see --help-query-gpu)");
  args->app_option = q->add_option(
      "--query-compute-apps", args->app_fields,
      "Comma-separated compute-app fields: timestamp, gpu_name, gpu_bus_id, gpu_serial, "
      "gpu_uuid, pid, process_name, used_gpu_memory");
  q->add_option("--format", args->format, "csv[,noheader][,nounits]");
  q->add_option("-i,--id", args->id, "GPUs: indices, UUIDs or PCI bus ids, comma-separated");
  q->add_option("-l,--loop", args->loop,
                "Repeat every SEC seconds (or a duration: 500ms, 5m) until interrupted");
  args->loop_ms_option =
      q->add_option("--loop-ms", args->loop_ms, "Repeat every MS milliseconds (also -lms)");
  q->add_flag("--help-query-gpu", args->help_gpu, "List the --query-gpu fields gpuwatch supports");
  return [q, &common, args]() -> int {
    if (!q->parsed()) return -1;
    return RunQuery(common, *args);
  };
}

}  // namespace gpuwatch::cli
