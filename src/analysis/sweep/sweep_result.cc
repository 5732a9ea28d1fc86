#include "analysis/sweep/sweep_result.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuwatch::sweep {
namespace {

using nlohmann::json;
std::string GibOr(const std::optional<double>& bytes) { return bytes ? GibText(*bytes) : "-"; }

std::string Joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string ModeName(SweepResult::Mode m) {
  switch (m) {
    case SweepResult::Mode::kValues:
      return "values";
    case SweepResult::Mode::kSearch:
      return "search";
    case SweepResult::Mode::kBisect:
      return "bisect";
    case SweepResult::Mode::kUntilOom:
      return "until-oom";
    case SweepResult::Mode::kConcurrency:
      return "concurrency";
  }
  return "values";
}

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json Optional(const std::optional<long>& v) { return v ? json(*v) : json(nullptr); }

json RunJson(const RunRecord& r) {
  json copies = json::array();
  for (const auto& c : r.copy) {
    copies.push_back(
        {{"pid", c.pid},
         {"exit_status", c.exit_status ? json(*c.exit_status) : json(nullptr)},
         {"result", VerdictName(c.verdict)},
         {"reason", c.reason},
         {"peak_process_memory_bytes", c.peak_process_bytes},
         {"framework_allocated_bytes", Optional(c.framework_allocated_bytes)},
         {"framework_reserved_bytes", Optional(c.framework_reserved_bytes)},
         {"framework_inactive_split_bytes", Optional(c.framework_inactive_split_bytes)},
         {"needed_memory_bytes", Optional(NeededBytes(c))},
         {"steps", c.steps},
         {"throughput_per_s", Optional(c.throughput)},
         {"output_tail", c.output_tail}});
  }
  return {{"value", r.value},
          {"copies", r.copies},
          {"result", VerdictName(r.verdict)},
          {"reason", r.reason},
          {"peak_process_memory_bytes", r.PeakProcessBytes()},
          {"peak_device_memory_bytes", r.peak_device_bytes},
          {"needed_memory_bytes", Optional(r.PeakNeededBytes())},
          {"total_throughput_per_s", r.TotalThroughput()},
          {"seconds", r.seconds},
          {"per_copy", copies}};
}

std::string Throughput(const RunRecord& r) {
  const bool any = std::any_of(r.copy.begin(), r.copy.end(),
                               [](const CopyRecord& c) { return c.throughput.has_value(); });
  return any ? fmt::format("{:.1f}", r.TotalThroughput()) : "-";
}

void RenderCapacity(const SweepResult& s, std::string& out) {
  if (!s.fit) {
    out += fmt::format("memory fit: none ({})\n", s.fit_note);
    return;
  }
  out += fmt::format("memory: {}: {}\n", s.fit->verdict, s.fit->evidence);
  if (s.fit_of_needed) {
    out +=
        "memory fitted: NVML's less the cache the framework frees when short "
        "(reserved - allocated - inactive split)\n";
  }
  if (!s.capacity) return;
  const Capacity& c = *s.capacity;
  std::string line =
      fmt::format("largest bs under {} (free {} less {:.0f} %): ", GibText(c.budget_bytes),
                  GibText(s.free_bytes), 100 * s.margin);
  if (!c.largest) {
    line += "none: " + c.note;
  } else {
    line += std::to_string(*c.largest);
    if (c.low && c.high) {
      line += fmt::format(" (95 % interval {}-{})", *c.low, *c.high);
    } else if (!c.note.empty()) {
      line += " (" + c.note + ")";
    }
  }
  out += line + "\n";
}

void RenderBoundary(const SweepResult& s, std::string& out) {
  if (!s.boundary) return;
  const Boundary& b = *s.boundary;
  std::string line = "boundary: ";
  if (b.largest_fit) line += fmt::format("{} fits", *b.largest_fit);
  if (b.largest_fit && b.smallest_oom) line += ", ";
  if (b.smallest_oom) line += fmt::format("{} runs out of memory", *b.smallest_oom);
  if (!b.largest_fit && !b.smallest_oom) line += "not reached";
  if (b.smallest_oom && !b.largest_fit) line += " (no value fit)";
  if (!b.smallest_oom && b.largest_fit) line += " (no value ran out of memory)";
  const long trials = static_cast<long>(s.runs.size());
  if (s.mode == SweepResult::Mode::kSearch || s.mode == SweepResult::Mode::kBisect) {
    line += fmt::format("; {} in {} trials", b.found() ? "found" : "not found", trials);
    if (s.mode == SweepResult::Mode::kBisect) line += " by doubling + bisection";
    if (s.doubling_trials) line += fmt::format(" (doubling + bisection: {})", *s.doubling_trials);
  }
  out += line + "\n";
  if (s.configured && b.smallest_oom) {
    out += fmt::format("configured bs {}: the first out-of-memory is at {} ({:.1f}x)\n",
                       *s.configured, *b.smallest_oom,
                       static_cast<double>(*b.smallest_oom) / static_cast<double>(*s.configured));
  }
}

}  // namespace

double RunRecord::PeakProcessBytes() const {
  double peak = 0;
  for (const auto& c : copy) peak = std::max(peak, c.peak_process_bytes);
  return peak;
}

std::optional<double> NeededBytes(const CopyRecord& c) {
  if (!c.framework_allocated_bytes || !c.framework_reserved_bytes ||
      !c.framework_inactive_split_bytes) {
    return std::nullopt;
  }
  const double releasable = *c.framework_reserved_bytes - *c.framework_allocated_bytes -
                            *c.framework_inactive_split_bytes;
  return c.peak_process_bytes - std::clamp(releasable, 0.0, c.peak_process_bytes);
}

std::optional<double> RunRecord::PeakNeededBytes() const {
  std::optional<double> peak;
  for (const auto& c : copy) {
    const auto needed = NeededBytes(c);
    if (!needed) return std::nullopt;
    peak = std::max(peak.value_or(0), *needed);
  }
  return peak;
}

double RunRecord::TotalThroughput() const {
  double total = 0;
  for (const auto& c : copy) total += c.throughput.value_or(0);
  return total;
}

std::string VerdictName(RunVerdict v) {
  switch (v) {
    case RunVerdict::kFits:
      return "fits";
    case RunVerdict::kOom:
      return "oom";
    case RunVerdict::kFailed:
      return "failed";
  }
  return "failed";
}

std::string ProgressLine(const RunRecord& r) {
  const std::string what = r.copies > 1 || r.value == 0
                               ? fmt::format("{} {}", r.copies, r.copies == 1 ? "copy" : "copies")
                               : fmt::format("bs {}", r.value);
  return fmt::format("{}: {}, {} process, {} device, {} steps/s ({}, {:.1f} s)", what,
                     VerdictName(r.verdict), GibText(r.PeakProcessBytes()),
                     GibText(r.peak_device_bytes), Throughput(r), r.reason, r.seconds);
}

std::vector<std::string> VerdictLines(const SweepResult& s) {
  std::string text;
  if (s.mode == SweepResult::Mode::kConcurrency) {
    if (s.holds) {
      text += s.holds->holds
                  ? fmt::format("this GPU holds {} of these jobs: {}\n", *s.holds->holds,
                                s.holds->reason)
                  : fmt::format("this GPU holds none of these jobs: {}\n", s.holds->reason);
    }
  } else {
    RenderCapacity(s, text);
    RenderBoundary(s, text);
  }
  if (!s.stopped.empty()) text += "stopped: " + s.stopped + "\n";
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

std::string RenderSweep(const SweepResult& s) {
  std::string out = fmt::format("{}gpuwatch sweep: {} on GPU {} ({}, {} free of {})\n",
                                s.demo ? "DEMO " : "", Joined(s.command), s.gpu, s.gpu_name,
                                GibText(s.free_bytes), GibText(s.total_bytes));
  if (s.mode == SweepResult::Mode::kConcurrency) {
    out += fmt::format("{:>7}  {:<6}  {:>11}  {:>11}  {:>8}  {}\n", "copies", "result",
                       "process mem", "device mem", "total/s", "each/s");
    for (const auto& r : s.runs) {
      std::string each;
      for (const auto& c : r.copy) {
        each += (each.empty() ? "" : " ") +
                (c.throughput ? fmt::format("{:.1f}", *c.throughput) : std::string("-"));
      }
      out += fmt::format("{:>7}  {:<6}  {:>11}  {:>11}  {:>8}  {}\n", r.copies,
                         VerdictName(r.verdict), GibText(r.PeakProcessBytes()),
                         GibText(r.peak_device_bytes), Throughput(r), each);
    }
  } else {
    out += fmt::format("{:>7}  {:<6}  {:>11}  {:>11}  {:>10}  {:>10}  {:>8}\n", "bs", "result",
                       "process mem", "device mem", "allocated", "reserved", "steps/s");
    for (const auto& r : s.runs) {
      const CopyRecord* c = r.copy.empty() ? nullptr : &r.copy.front();
      out +=
          fmt::format("{:>7}  {:<6}  {:>11}  {:>11}  {:>10}  {:>10}  {:>8}\n", r.value,
                      VerdictName(r.verdict), GibText(r.PeakProcessBytes()),
                      GibText(r.peak_device_bytes), c ? GibOr(c->framework_allocated_bytes) : "-",
                      c ? GibOr(c->framework_reserved_bytes) : "-", Throughput(r));
    }
  }
  for (const auto& line : VerdictLines(s)) out += line + "\n";
  return out;
}

json SweepToJson(const SweepResult& s) {
  json runs = json::array();
  for (const auto& r : s.runs) runs.push_back(RunJson(r));
  json j = {{"schema", "gpuwatch.sweep/1"},
            {"mode", ModeName(s.mode)},
            {"demo", s.demo},
            {"command", s.command},
            {"gpu", s.gpu},
            {"gpu_name", s.gpu_name},
            {"total_memory_bytes", s.total_bytes},
            {"free_memory_bytes", s.free_bytes},
            {"margin", s.margin},
            {"runs", runs},
            {"verdict", VerdictLines(s)},
            {"stopped", s.stopped.empty() ? json(nullptr) : json(s.stopped)}};
  if (s.fit) {
    j["fit"] = {{"model", s.fit->model == MemoryFit::Model::kQuadratic ? "quadratic" : "linear"},
                {"verdict", s.fit->verdict},
                {"a_bytes", s.fit->a},
                {"b_bytes_per_value", s.fit->b},
                {"c_bytes_per_value2", s.fit->c},
                {"r2_linear", s.fit->r2_linear},
                {"r2_quadratic", Optional(s.fit->r2_quadratic)},
                {"f_statistic", Optional(s.fit->f_statistic)},
                {"f_critical", Optional(s.fit->f_critical)},
                {"residual_bytes", Optional(s.fit->residual_bytes)},
                {"evidence", s.fit->evidence},
                {"measure", s.fit_of_needed ? "needed" : "process"}};
  } else {
    j["fit"] = nullptr;
    j["fit_note"] = s.fit_note;
  }
  if (s.capacity) {
    j["largest_fitting"] = {{"budget_bytes", s.capacity->budget_bytes},
                            {"value", Optional(s.capacity->largest)},
                            {"low", Optional(s.capacity->low)},
                            {"high", Optional(s.capacity->high)},
                            {"note", s.capacity->note}};
  }
  if (s.boundary) {
    j["boundary"] = {
        {"largest_fit", Optional(s.boundary->largest_fit)},
        {"smallest_oom", Optional(s.boundary->smallest_oom)},
        {"found", s.boundary->found()},
        {"trials", s.runs.size()},
        {"doubling_bisection_trials", s.doubling_trials ? json(*s.doubling_trials) : json(nullptr)},
        {"configured", Optional(s.configured)}};
  }
  if (s.holds) {
    j["concurrency"] = {{"holds", s.holds->holds ? json(*s.holds->holds) : json(nullptr)},
                        {"reason", s.holds->reason}};
  }
  return j;
}

}  // namespace gpuwatch::sweep
