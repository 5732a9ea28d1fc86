#include "cli/pipeline.h"

namespace gpuwatch::cli {

void AddPipelineOptions(CLI::App& command, PipelineOptions& o) {
  command.add_option("--csv", o.csv,
                     "Append one CSV row per GPU per sample to FILE (docs/outputs.md)");
  command.add_option("--jsonl", o.jsonl,
                     "Append JSON Lines (samples, events, marks; gpuwatch.jsonl/1) to FILE");
  command.add_option("--db", o.db, "Record history in this SQLite file (docs/history.md)");
  command.add_option("--rules", o.rules,
                     "Alert rules (YAML, docs/rules.md); default: the built-in rules");
  command.add_flag("--allow-commands", o.allow_commands,
                   "Let rule actions run programs (`command:` actions)");
  command.add_option("--leak-window", o.leak_window,
                     "Finest floor window of leak detection (default 5s; every other leak "
                     "window scales with it: docs/leaks.md). Rarely needed: warnings come as "
                     "fast as the danger by default");
}

}  // namespace gpuwatch::cli
