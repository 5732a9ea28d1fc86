#include "report/sweep_report.h"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <tuple>

#include "report/report_html.h"

namespace gpuwatch::report {
namespace {

using nlohmann::json;

std::string Shown(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// A problem at `path` ("runs[2].value") of the document read from `where`.
Status Bad(std::string_view where, const std::string& path, const std::string& problem) {
  return Status::InvalidArgument(fmt::format("{}: {}: {}", where, path, problem));
}

// A number at `key` of `object`, >= `min`; null allowed when `nullable`.
Status Number(const json& object, const std::string& at, const char* key, std::string_view where,
              double min, bool nullable = false, bool whole = false) {
  const std::string path = at.empty() ? key : at + "." + key;
  const auto it = object.find(key);
  if (it == object.end()) return Bad(where, path, "missing");
  if (it->is_null() && nullable) return Status::Ok();
  if (!it->is_number() || !std::isfinite(it->get<double>())) {
    return Bad(where, path, fmt::format("expected a number, found {}", Shown(*it)));
  }
  const double v = it->get<double>();
  if (whole && v != std::floor(v)) {
    return Bad(where, path, fmt::format("expected a whole number, found {}", Shown(*it)));
  }
  if (v < min) return Bad(where, path, fmt::format("must be at least {}, found {}", min, v));
  return Status::Ok();
}

Status Run(const json& run, const std::string& at, std::string_view where) {
  if (!run.is_object()) return Bad(where, at, "expected an object, found " + Shown(run));
  for (const auto& [key, min, whole] :
       {std::tuple{"value", 0.0, true}, std::tuple{"copies", 1.0, true},
        std::tuple{"peak_process_memory_bytes", 0.0, false},
        std::tuple{"peak_device_memory_bytes", 0.0, false}}) {
    if (Status s = Number(run, at, key, where, min, false, whole); !s.ok()) return s;
  }
  if (run.contains("needed_memory_bytes")) {  // since the fit of what runs need
    if (Status s = Number(run, at, "needed_memory_bytes", where, 0, true); !s.ok()) return s;
  }
  static const std::set<std::string> kResults = {"fits", "oom", "failed"};
  const auto result = run.find("result");
  if (result == run.end() || !result->is_string() || !kResults.count(result->get<std::string>())) {
    return Bad(where, at + ".result",
               "expected \"fits\", \"oom\" or \"failed\", found " +
                   (result == run.end() ? std::string("nothing") : Shown(*result)));
  }
  const auto copies = run.find("per_copy");
  if (copies == run.end() || !copies->is_array()) {
    return Bad(where, at + ".per_copy", "expected an array of the run's copies");
  }
  for (std::size_t i = 0; i < copies->size(); ++i) {
    const json& c = (*copies)[i];
    const std::string path = fmt::format("{}.per_copy[{}]", at, i);
    if (!c.is_object()) return Bad(where, path, "expected an object, found " + Shown(c));
    for (const char* key :
         {"framework_allocated_bytes", "framework_reserved_bytes", "framework_inactive_split_bytes",
          "needed_memory_bytes", "throughput_per_s"}) {
      if (!c.contains(key)) continue;
      if (Status s = Number(c, path, key, where, 0, true); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

}  // namespace

bool IsSweepDocument(const json& doc) {
  if (!doc.is_object()) return false;
  const auto it = doc.find("schema");
  return it != doc.end() && it->is_string() &&
         it->get<std::string>().rfind("gpuwatch.sweep/", 0) == 0;
}

Status CheckSweepDocument(const json& doc, std::string_view where) {
  if (!doc.is_object()) {
    return Status::InvalidArgument(
        fmt::format("{}: expected a sweep's JSON object (gpuwatch sweep --json)", where));
  }
  const auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string() || *schema != kSweepSchema) {
    return Bad(where, "schema",
               fmt::format("expected \"{}\", found {}", kSweepSchema,
                           schema == doc.end() ? std::string("nothing") : Shown(*schema)));
  }
  static const std::set<std::string> kModes = {"values", "search", "bisect", "until-oom",
                                               "concurrency"};
  const auto mode = doc.find("mode");
  if (mode == doc.end() || !mode->is_string() || !kModes.count(mode->get<std::string>())) {
    return Bad(where, "mode",
               "expected values, search, bisect, until-oom or concurrency, found " +
                   (mode == doc.end() ? std::string("nothing") : Shown(*mode)));
  }
  for (const char* key : {"total_memory_bytes", "free_memory_bytes", "margin"}) {
    if (Status s = Number(doc, "", key, where, 0); !s.ok()) return s;
  }
  if (doc["margin"].get<double>() >= 1) return Bad(where, "margin", "must be under 1");
  const auto runs = doc.find("runs");
  if (runs == doc.end() || !runs->is_array()) {
    return Bad(where, "runs", "expected an array of runs");
  }
  for (std::size_t i = 0; i < runs->size(); ++i) {
    if (Status s = Run((*runs)[i], fmt::format("runs[{}]", i), where); !s.ok()) return s;
  }
  if (const auto fit = doc.find("fit"); fit != doc.end() && !fit->is_null()) {
    if (!fit->is_object()) return Bad(where, "fit", "expected an object or null");
    for (const char* key : {"a_bytes", "b_bytes_per_value", "c_bytes_per_value2"}) {
      if (Status s = Number(*fit, "fit", key, where, -HUGE_VAL); !s.ok()) return s;
    }
  }
  if (const auto c = doc.find("largest_fitting"); c != doc.end()) {
    if (!c->is_object()) return Bad(where, "largest_fitting", "expected an object");
    if (Status s = Number(*c, "largest_fitting", "budget_bytes", where, 0); !s.ok()) return s;
    for (const char* key : {"value", "low", "high"}) {
      if (Status s = Number(*c, "largest_fitting", key, where, 0, true, true); !s.ok()) return s;
    }
  }
  if (const auto b = doc.find("boundary"); b != doc.end()) {
    if (!b->is_object()) return Bad(where, "boundary", "expected an object");
    for (const char* key : {"largest_fit", "smallest_oom"}) {
      if (Status s = Number(*b, "boundary", key, where, 0, true, true); !s.ok()) return s;
    }
  }
  if (const auto v = doc.find("verdict"); v != doc.end()) {
    if (!v->is_array()) return Bad(where, "verdict", "expected an array of lines");
    for (std::size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) {
        return Bad(where, fmt::format("verdict[{}]", i), "expected a line of text");
      }
    }
  }
  return Status::Ok();
}

Result<std::string> RenderSweepHtml(json doc, std::string_view where, const std::string& title) {
  if (Status s = CheckSweepDocument(doc, where); !s.ok()) return s;
  if (!title.empty()) {
    doc["title"] = title;
  } else {
    std::string command;
    if (const auto c = doc.find("command"); c != doc.end() && c->is_array()) {
      for (const auto& a : *c) {
        if (a.is_string()) command += (command.empty() ? "" : " ") + a.get<std::string>();
      }
    }
    const auto gpu = doc.find("gpu");
    doc["title"] = fmt::format("gpuwatch sweep \u2014 {}{}", command.empty() ? "a job" : command,
                               gpu != doc.end() && gpu->is_number_integer()
                                   ? fmt::format(" on GPU {}", gpu->get<int>())
                                   : "");
  }
  return RenderHtml(doc);
}

}  // namespace gpuwatch::report
