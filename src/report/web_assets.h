// The report's web bundle (web/src/report/, built by web/build.mjs), embedded
// at build time by cmake/EmbedFiles.cmake. Empty views when the build had no
// bundle.
#pragma once

#include <string_view>

namespace gpuwatch::report::web {

extern const std::string_view kReportHtml;
extern const std::string_view kReportJs;
extern const std::string_view kReportCss;

}  // namespace gpuwatch::report::web
