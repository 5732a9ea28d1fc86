#include "cli/help_examples.h"

namespace gpuwatch::cli {

const std::vector<Example>& Examples() {
  static const std::vector<Example> examples = {
      {"", "gpuwatch", "Every GPU and what each process holds, now"},
      {"", "gpuwatch --id 0,1 --no-processes", "GPUs 0 and 1, without the process tables"},
      {"", "gpuwatch --json", "The same as JSON (docs/json.md)"},
      {"", "gpuwatch -l 5s --demo", "The simulated demo fleet, again every 5 seconds"},
      {"query", "gpuwatch query --query-gpu=index,name,memory.used,utilization.gpu --format=csv",
       "nvidia-smi's CSV, for scripts written against it"},
      {"query",
       "gpuwatch query --query-compute-apps=pid,process_name,used_gpu_memory "
       "--format=csv,noheader",
       "The compute processes, without the header"},
      {"query", "gpuwatch query --query-gpu=temperature.gpu,power.draw --format=csv,nounits -l 5",
       "Temperature and power every 5 seconds, bare numbers"},
      {"doctor", "gpuwatch doctor", "Check the driver, NVML and the devices; say what to fix"},
      {"doctor", "gpuwatch doctor --host-proc /proc", "The same, naming the /proc to read"},
      {"watch", "gpuwatch watch", "A log line per GPU every second, and every alert"},
      {"watch", "gpuwatch watch -i 500ms --csv gpus.csv --duration 1h",
       "Twice a second for an hour, into a CSV file"},
      {"watch", "gpuwatch watch -q --db history.db --rules rules.yaml",
       "Only the events, with your rules; the history into SQLite"},
      {"watch", "gpuwatch watch --replay run.jsonl --replay-speed 0",
       "Analyse a recording again, as fast as possible"},
      {"run", "gpuwatch run -- python train.py", "Follow a job's GPU use; a summary at the end"},
      {"run", "gpuwatch run --gpus auto:2 --memory-limit 40GiB -- python train.py",
       "On the 2 least busy GPUs, stopped past 40 GiB"},
      {"run", "gpuwatch run --jsonl run.jsonl --report run.html -- ./train.sh",
       "Record the job and write its HTML report"},
      {"sweep", "gpuwatch sweep --values 8,16,32,64 -- python train.py --batch-size {bs}",
       "Memory against batch size: the fit and the largest batch that fits"},
      {"sweep", "gpuwatch sweep --search -- python train.py --batch-size {bs}",
       "Find the out-of-memory boundary in a few runs"},
      {"sweep", "gpuwatch sweep --values 64 --concurrency 1,2,3,4 -- ./train.sh {bs}",
       "How many copies of the job one GPU holds"},
      {"report", "gpuwatch report run.jsonl", "The HTML report of a recording, as run.html"},
      {"report", "gpuwatch report history.db -o nightly.html --title nightly",
       "From a SQLite history, named and titled"},
      {"serve", "gpuwatch serve", "Metrics, API and dashboard on 127.0.0.1:9835"},
      {"serve", "gpuwatch serve --listen 0.0.0.0:9835 --allow-host gpu01.example.com",
       "Open to the network, answering as gpu01.example.com"},
      {"serve", "gpuwatch serve --config gpuwatch.yaml --db history.db --process-metrics",
       "From a config file, with history and per-process series"},
      {"select", "gpuwatch select -n 2 --min-free 20GiB", "The 2 least busy GPUs with 20 GiB free"},
      {"select", "gpuwatch select --format env --lease",
       "CUDA_VISIBLE_DEVICES=..., leased to the calling shell"},
      {"select", "gpuwatch select --release", "Give the calling shell's leases back"},
      {"top", "gpuwatch top", "The live terminal view of this machine"},
      {"top", "gpuwatch top --remote gpu01:9835,gpu02:9835", "Two machines' daemons in one view"},
      {"top", "gpuwatch top --replay run.jsonl --theme light", "A recording, on a light terminal"},
      {"version", "gpuwatch version", "gpuwatch's version"},
      {"completion", "gpuwatch completion bash > /etc/bash_completion.d/gpuwatch",
       "Install bash completion (docs/cli.md for zsh and fish)"},
      {"completion", "gpuwatch completion fish > ~/.config/fish/completions/gpuwatch.fish",
       "Install fish completion for yourself"},
      {"man", "gpuwatch man | man -l -", "Read this manual"},
  };
  return examples;
}

std::vector<Example> ExamplesOf(std::string_view command) {
  std::vector<Example> out;
  for (const Example& e : Examples()) {
    if (e.command == command) out.push_back(e);
  }
  return out;
}

std::vector<std::string> ExampleArguments(std::string_view line) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (start == i) break;
    const std::string_view word = line.substr(start, i - start);
    if (word == ">" || word == "|") break;
    words.emplace_back(word);
  }
  if (!words.empty()) words.erase(words.begin());  // "gpuwatch"
  return words;
}

}  // namespace gpuwatch::cli
