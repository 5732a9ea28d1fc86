// `gpuwatch query`: nvidia-smi's --query-gpu / --query-compute-apps language,
// written exactly as nvidia-smi writes it so scripts work unchanged.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/device_filter.h"
#include "cli/signals.h"
#include "export/smi_format.h"
#include "sampler/collect.h"

namespace gpuwatch::cli {
namespace {

struct QueryArgs {
  std::string gpu_fields;
  std::string app_fields;
  std::string format = "csv";
  std::string id;
  double loop_s = 0;
  long loop_ms = 0;
  bool help_gpu = false;
};

// nvidia-smi follows a bad field with an empty line, a bad format without.
int Fail(const std::string& message, int code, bool blank_line = true) {
  std::cerr << message << (blank_line ? "\n\n" : "\n");
  return code;
}

int RunQuery(const CommonArgs& common, const QueryArgs& args) {
  if (args.help_gpu) {
    std::cout << smi::HelpQueryGpu();
    return kExitOk;
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
  if (args.loop_s < 0 || args.loop_ms < 0)
    return Fail("gpuwatch query: the loop interval must be positive", kExitUsage);

  auto source = OpenSource(common);
  if (!source) return Fail("gpuwatch: " + source.error().message(), ExitStatusFor(source.error()));

  // Read only what was asked for: a query is a one-shot hot path.
  CollectOptions collect;
  collect.fields.reset();
  for (const auto& c : *columns) {
    if (c.field) Set(collect.fields, *c.field);
  }
  Set(collect.fields, FieldId::kUuid);  // --id by UUID
  Set(collect.fields, FieldId::kPciBusId);
  Set(collect.fields, FieldId::kMigMode);
  collect.processes = apps;
  collect.mig = false;

  std::chrono::milliseconds period(args.loop_ms > 0 ? args.loop_ms
                                                    : static_cast<long>(args.loop_s * 1000));
  if (period.count() > 0) {
    CatchSignals();
  }
  bool first = true;
  auto next = std::chrono::steady_clock::now();
  do {
    Snapshot snap = CollectOnce(*source->backend, apps ? source->resolver.get() : nullptr, collect);
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
    while (!SignalPending() && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          next - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
    }
  } while (!SignalPending());
  return kExitOk;
}

}  // namespace

Runner AddQueryCommand(CLI::App& app, const CommonArgs& common) {
  auto args = std::make_shared<QueryArgs>();
  CLI::App* q = app.add_subcommand(
      "query", "nvidia-smi compatible queries (--query-gpu, --query-compute-apps)");
  q->add_option("--query-gpu", args->gpu_fields,
                "Comma-separated GPU fields (see --help-query-gpu)");
  q->add_option("--query-compute-apps", args->app_fields,
                "Comma-separated compute-app fields: timestamp, gpu_name, gpu_bus_id, gpu_serial, "
                "gpu_uuid, pid, process_name, used_gpu_memory");
  q->add_option("--format", args->format, "csv[,noheader][,nounits]");
  q->add_option("-i,--id", args->id, "GPUs: indices, UUIDs or PCI bus ids, comma-separated");
  q->add_option("-l,--loop", args->loop_s, "Repeat every SEC seconds until interrupted");
  q->add_option("--loop-ms", args->loop_ms, "Repeat every MS milliseconds (also -lms)");
  q->add_flag("--help-query-gpu", args->help_gpu, "List the --query-gpu fields gpuwatch supports");
  return [q, &common, args]() -> int {
    if (!q->parsed()) return -1;
    return RunQuery(common, *args);
  };
}

std::vector<std::string> NormalizeArgs(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-lms")
      a = "--loop-ms";
    else if (a.starts_with("-lms="))
      a = "--loop-ms=" + a.substr(5);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace gpuwatch::cli
