// The web bundles (web/, built by web/build.mjs): the HTML report's page and
// the live dashboard, embedded at build time by cmake/EmbedFiles.cmake. Empty
// views when the build had no bundle (no npm); users of each say so.
#pragma once

#include <string_view>

namespace gpuwatch::web {

extern const std::string_view kReportHtml;
extern const std::string_view kReportJs;
extern const std::string_view kReportCss;
extern const std::string_view kDashboardHtml;
extern const std::string_view kDashboardJs;
extern const std::string_view kDashboardCss;

}  // namespace gpuwatch::web
