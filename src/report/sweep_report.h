// The HTML page of a `gpuwatch sweep`: the report's one page and bundle
// (report_html.h), given the sweep's document (schema gpuwatch.sweep/1, as
// `sweep --json` writes it) instead of a job's; the page draws a sweep when it
// sees that schema. `sweep --report FILE` and `report SWEEP.json` both come
// here. docs/sweep.md describes the page.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gpuwatch/status.h"

namespace gpuwatch::report {

inline constexpr std::string_view kSweepSchema = "gpuwatch.sweep/1";

// Whether `doc` claims to be a sweep's document (its "schema" starts with
// "gpuwatch.sweep/"), valid or not.
bool IsSweepDocument(const nlohmann::json& doc);

// Checks what the page reads: the schema, the runs and their values, memory
// and results, the fit's coefficients, the boundary. The message names the
// first problem and where it is, after `where` (a file name).
Status CheckSweepDocument(const nlohmann::json& doc, std::string_view where);

// The page; `title` empty: "gpuwatch sweep — CMD on GPU N".
Result<std::string> RenderSweepHtml(nlohmann::json doc, std::string_view where,
                                    const std::string& title);

}  // namespace gpuwatch::report
