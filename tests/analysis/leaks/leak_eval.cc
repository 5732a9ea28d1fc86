// leak_eval: the leak evaluation of docs/leaks.md. Runs every case of
// leak_cases.cc (scenarios through the real NvmlBackend and the fake NVML,
// recordings through ReplayBackend) with the leak tracker at default options
// and the seed's baseline rule, scores them (leak_evaluation.h) and prints
// Markdown: the detector's table, the baseline's, notes, and a one-line tally.
//
//   leak_eval [CASE_DIR [FAKE_LIBRARY]] [--only NAME[,NAME...]] [--events] [--seeds N]
//             [--strict]
//
// --events adds every leak and forecast event of the cases run, with the
// true time to OOM at its time (to see why a case misses a target).
// --seeds N runs every scenario case again under N other noise seeds
// (GPUWATCH_FAKE_NOISE_SEED=1..N: the same shapes, other noise) and prints
// what each run missed, with a tally: a rare false verdict shows here.
// Exit status: 1 when a case could not be replayed; with --strict also 2 when
// a case misses a target.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "leak_evaluation.h"

namespace {

using gpuwatch::Event;
using gpuwatch::leaks::eval::CaseResult;
using gpuwatch::leaks::eval::LeakCase;
using gpuwatch::leaks::eval::Report;
using gpuwatch::leaks::eval::Score;

std::string Duration(double s) {
  const auto secs = static_cast<long long>(std::llround(s));
  if (secs < 60) return fmt::format("{}s", secs);
  if (secs < 3600) return fmt::format("{}m{:02}s", secs / 60, secs % 60);
  const long long minutes = (secs + 30) / 60;
  return fmt::format("{}h{:02}m", minutes / 60, minutes % 60);
}

// h:mm:ss, for event times.
std::string Clock(double s) {
  const auto secs = static_cast<long long>(std::llround(s));
  return fmt::format("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
}

std::string Percent(const std::optional<double>& error, bool signed_value = true) {
  if (!error) return "n/a";
  return signed_value ? fmt::format("{:+.0f} %", 100 * *error)
                      : fmt::format("{:.0f} %", 100 * *error);
}

std::string KindWord(Event::Kind k) {
  return k == Event::Kind::kLeakSuspected ? "verdict" : "forecast";
}

std::string Rate(double mib_per_min) {
  return mib_per_min >= 100 ? fmt::format("{:.0f}", mib_per_min)
                            : fmt::format("{:.3g}", mib_per_min);
}

std::string Label(const LeakCase& c) {
  if (!c.is_leak()) return "quiet";
  std::string s = fmt::format("leak, pid {}, {} MiB/min from {}", *c.leaking_pid,
                              Rate(c.true_rate_mib_per_min), Duration(*c.leak_start_s));
  for (const auto& rc : c.rate_changes) {
    s += fmt::format(", {} from {}", Rate(rc.mib_per_min), Duration(rc.at_s));
  }
  return s;
}

std::string Errors(const Score& s) {
  if (!s.warning) return "—";
  return fmt::format("{} / {} / {}", Percent(s.warning->forecast_error),
                     s.verdict ? Percent(s.verdict->forecast_error) : "—",
                     s.worst_forecast_error ? Percent(s.worst_forecast_error, false) : "n/a");
}

std::string Result(const Score& s) {
  const std::vector<std::string> f = s.Failures();
  if (f.empty()) return "ok";
  std::string out;
  for (const auto& x : f) out += (out.empty() ? "" : "; ") + x;
  return "**" + out + "**";
}

void PrintDetectorRow(const CaseResult& r) {
  const LeakCase& c = r.leak_case;
  const Score& s = r.score;
  const bool leak = c.is_leak();
  std::puts(fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} ({}) | {} | {} |", c.name,
                        Label(c), c.what,
                        leak && s.time_to_oom_s ? Duration(*s.time_to_oom_s) : "—",
                        leak && s.budget_s ? Duration(*s.budget_s) : "—",
                        !leak       ? "—"
                        : s.warning ? fmt::format("{} ({})", Duration(s.warning->delay_s),
                                                  KindWord(s.warning->kind))
                                    : "none",
                        !leak       ? "—"
                        : s.verdict ? Duration(s.verdict->delay_s)
                                    : "none",
                        s.false_verdicts.size(), s.quiet_forecasts, s.standing_forecasts.size(),
                        leak ? Errors(s) : "—", Result(s))
                .c_str());
}

void PrintBaselineRow(const CaseResult& r) {
  const LeakCase& c = r.leak_case;
  const Score& s = r.score;
  std::string detected = "—";
  if (c.is_leak()) detected = s.baseline_delay_s ? Duration(*s.baseline_delay_s) : "none";
  std::string false_alarms = std::to_string(s.baseline_false_alarms);
  if (s.baseline_false_alarms > 0) {
    for (const auto& a : r.trace.baseline) {
      const bool true_alarm = c.is_leak() && a.subject.gpu == c.gpu &&
                              (!a.subject.pid || a.subject.pid == c.leaking_pid) &&
                              a.t_s >= *c.leak_start_s;
      if (!true_alarm) {
        false_alarms += fmt::format(" (first at {})", Duration(a.t_s));
        break;
      }
    }
  }
  std::puts(fmt::format("| {} | {} | {} | {} |", c.name, Label(c), detected, false_alarms).c_str());
}

void PrintEvents(const CaseResult& r) {
  std::printf("\nEvents of %s (h:mm:ss since the start of the case):\n\n",
              r.leak_case.name.c_str());
  for (const auto& te : r.trace.events) {
    const Event& e = te.event;
    const auto truth = gpuwatch::leaks::eval::TrueTimeToFull(r.leak_case, r.trace, te.t_s);
    std::string forecast = "—";
    if (e.time_to_full) {
      forecast = Duration(static_cast<double>(e.time_to_full->count()));
      if (truth) forecast += fmt::format(" (truth {})", Duration(*truth));
    }
    std::puts(fmt::format("- {} {} {}{}: {:.1f} MiB/min, full in {}: {}", Clock(te.t_s),
                          gpuwatch::EventKindName(e.kind),
                          e.gpu ? fmt::format("GPU {}", *e.gpu) : "",
                          e.process ? fmt::format(" pid {}", e.process->pid) : "",
                          e.value.value_or(0) * 60 / (1024.0 * 1024.0), forecast, e.message)
                  .c_str());
  }
}

std::vector<std::string> Split(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    out.emplace_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return out;
}

}  // namespace

namespace {

// Every scenario case of `cases` again under noise seeds 1..n: a row a case,
// a column a seed, and the tally. Returns the runs that missed a target.
int PrintSeedRuns(const std::vector<LeakCase>& cases, const gpuwatch::leaks::eval::EvalPaths& paths,
                  int n) {
  std::string header = "| case |", rule = "| --- |";
  for (int k = 1; k <= n; ++k) {
    header += fmt::format(" seed {} |", k);
    rule += " --- |";
  }
  std::printf(
      "\nThe scenario cases under %d other noise seeds (GPUWATCH_FAKE_NOISE_SEED):\n\n%s\n%s\n", n,
      header.c_str(), rule.c_str());
  int runs = 0, passing = 0, false_verdicts = 0, standing = 0, leaks = 0, warned = 0;
  for (const LeakCase& c : cases) {
    if (c.source != gpuwatch::leaks::eval::CaseSource::kScenario) continue;
    std::string row = "| " + c.name + " |";
    for (int k = 1; k <= n; ++k) {
      setenv("GPUWATCH_FAKE_NOISE_SEED", std::to_string(k).c_str(), 1);
      const CaseResult r = gpuwatch::leaks::eval::RunCase(c, paths);
      ++runs;
      if (!r.error.empty()) {
        row += " error: " + r.error + " |";
        continue;
      }
      const Score& s = r.score;
      const auto failures = s.Failures();
      passing += failures.empty() ? 1 : 0;
      false_verdicts += static_cast<int>(s.false_verdicts.size());
      standing += static_cast<int>(s.standing_forecasts.size());
      if (c.is_leak()) {
        ++leaks;
        warned += s.warned_in_budget() ? 1 : 0;
      }
      std::string cell;
      for (const std::string& f : failures) cell += (cell.empty() ? "" : "; ") + f;
      row += " " + (cell.empty() ? std::string("ok") : "**" + cell + "**") + " |";
    }
    std::puts(row.c_str());
  }
  unsetenv("GPUWATCH_FAKE_NOISE_SEED");
  std::puts(fmt::format("\n**Under other seeds**: runs meeting every target {}/{}, leaks warned "
                        "within budget {}/{}, false leak verdicts {}, standing forecasts {}.",
                        passing, runs, warned, leaks, false_verdicts, standing)
                .c_str());
  return runs - passing;
}

}  // namespace

int main(int argc, char** argv) {
  gpuwatch::leaks::eval::EvalPaths paths{GPUWATCH_SOURCE_DIR "/scenarios/leaks",
                                         GPUWATCH_BINARY_DIR "/lib/libnvidia-ml-fake.so"};
  std::set<std::string> only;
  bool strict = false;
  bool events = false;
  int seeds = 0;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--strict") {
      strict = true;
    } else if (arg == "--events") {
      events = true;
    } else if (arg == "--seeds" && i + 1 < argc) {
      char* end = nullptr;
      const long n = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 1 || n > 1000) {
        std::fprintf(stderr, "leak_eval: --seeds takes a number from 1 to 1000, not '%s'\n",
                     argv[i]);
        return 64;
      }
      seeds = static_cast<int>(n);
    } else if (arg == "--only" && i + 1 < argc) {
      for (auto& n : Split(argv[++i])) only.insert(n);
    } else if (!arg.starts_with("--") && positional < 2) {
      (positional++ == 0 ? paths.case_dir : paths.fake_library) = std::string(arg);
    } else {
      std::fprintf(stderr,
                   "usage: leak_eval [CASE_DIR [FAKE_LIBRARY]] [--only NAME[,NAME...]] "
                   "[--events] [--seeds N] [--strict]\n");
      return 64;
    }
  }

  std::vector<CaseResult> results;
  std::vector<LeakCase> selected;
  int errors = 0;
  for (const LeakCase& c : gpuwatch::leaks::eval::AllCases()) {
    if (!only.empty() && !only.contains(c.name)) continue;
    selected.push_back(c);
    CaseResult r = gpuwatch::leaks::eval::RunCase(c, paths);
    if (!r.error.empty()) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), r.error.c_str());
      ++errors;
      continue;
    }
    results.push_back(std::move(r));
  }

  std::puts(
      "Detector (default options). Times: s, m, h of scenario time since the leak started.\n");
  std::puts(
      "| case | label | what | time to OOM | budget | first warning | verdict | false verdicts | "
      "quiet forecasts (standing) | forecast error: warning / verdict / worst | result |");
  std::puts("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const CaseResult& r : results) PrintDetectorRow(r);

  std::puts(
      "\nBaseline (the seed's rule: used > 1.5 × initial → leak). Detected: since the leak "
      "started; first false alarm: since the start of the case.\n");
  std::puts("| case | label | baseline: detected after | baseline: false alarms |");
  std::puts("| --- | --- | --- | --- |");
  int baseline_caught = 0, baseline_leaks = 0, baseline_false = 0;
  for (const CaseResult& r : results) {
    PrintBaselineRow(r);
    const Score& s = r.score;
    baseline_false += s.baseline_false_alarms;
    if (!r.leak_case.is_leak()) continue;
    ++baseline_leaks;
    baseline_caught += s.baseline_delay_s && s.budget_s && *s.baseline_delay_s <= *s.budget_s;
  }
  std::puts(fmt::format("\nBaseline: leaks caught within budget {}/{}, false alarms {}.",
                        baseline_caught, baseline_leaks, baseline_false)
                .c_str());

  std::string notes;
  for (const CaseResult& r : results) {
    const LeakCase& c = r.leak_case;
    const Score& s = r.score;
    if (!c.note.empty()) notes += fmt::format("- {}: {}\n", c.name, c.note);
    if (s.change_budget_s) {
      notes +=
          fmt::format("- {}: after the rate change at {}: budget {}, first report within 25 % {}\n",
                      c.name, Duration(c.rate_changes.back().at_s), Duration(*s.change_budget_s),
                      s.change_report ? "after " + Duration(s.change_report->delay_s) : "none");
    }
    if (s.warning) notes += fmt::format("- {}: first warning: {}\n", c.name, s.warning->message);
    if (s.worst && s.worst_forecast_error > gpuwatch::leaks::eval::kForecastTolerance) {
      notes += fmt::format("- {}: worst forecast ({}) {} after the leak started: {}\n", c.name,
                           Percent(s.worst->forecast_error), Duration(s.worst->delay_s),
                           s.worst->message);
    }
    if (s.cleared_during_leak > 0) {
      notes += fmt::format("- {}: forecast or verdict cleared {} times while the leak went on\n",
                           c.name, s.cleared_during_leak);
    }
    for (std::size_t i = 0; i < s.false_verdicts.size() && i < 3; ++i) {
      notes += fmt::format("- {}: false verdict at {}: {}\n", c.name,
                           Duration(s.false_verdicts[i].t_s), s.false_verdicts[i].event.message);
    }
  }
  if (!notes.empty())
    std::printf("\nNotes (times since the start of the case):\n\n%s", notes.c_str());

  if (events) {
    for (const CaseResult& r : results) PrintEvents(r);
  }

  int leaks = 0, warned = 0, false_verdicts = 0, standing = 0, without = 0, passing = 0;
  std::optional<double> worst;
  for (const CaseResult& r : results) {
    const Score& s = r.score;
    if (r.leak_case.is_leak()) {
      ++leaks;
      warned += s.warned_in_budget() ? 1 : 0;
    }
    false_verdicts += static_cast<int>(s.false_verdicts.size());
    standing += static_cast<int>(s.standing_forecasts.size());
    without += s.reports_without_forecast;
    if (s.worst_forecast_error) worst = std::max(worst.value_or(0), *s.worst_forecast_error);
    passing += s.Failures().empty() ? 1 : 0;
  }
  std::puts(fmt::format("\n**Tally**: leaks warned within budget {}/{}, false leak verdicts {}, "
                        "standing forecasts {}, max forecast error {} ({} reports without a "
                        "forecast); cases meeting every target {}/{}.",
                        warned, leaks, false_verdicts, standing, Percent(worst, false), without,
                        passing, results.size())
                .c_str());
  const int seed_misses = seeds > 0 ? PrintSeedRuns(selected, paths, seeds) : 0;
  if (errors > 0) return 1;
  return strict && (passing != static_cast<int>(results.size()) || seed_misses > 0) ? 2 : 0;
}
