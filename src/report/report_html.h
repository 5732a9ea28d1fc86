// The HTML report: one self-contained file (no network) made of the web
// bundle built from web/src/report/ (embedded in the binary at build time)
// and the report's data. docs/report.md describes it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gpuwatch/status.h"

namespace gpuwatch::report {

// Fails, saying how to get it, when this binary was built without the web
// bundle (no npm at build time).
Status CheckCanRender();

// The page for `data` (ReportRecorder::ToJson).
Result<std::string> RenderHtml(const nlohmann::json& data);

// Checks up front that `path` can be written (before a job starts), without
// leaving a file behind when it did not exist.
Status CheckWritable(const std::string& path);
// Writes the page next to `path` and renames it into place, so a reader
// never sees half a report.
Status WriteFileAtomically(const std::string& path, const std::string& content);

}  // namespace gpuwatch::report
