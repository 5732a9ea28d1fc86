#include "report/report_html.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "webassets/web_assets.h"

namespace gpuwatch::report {
namespace {

std::string EscapeHtml(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON inside <script>: no "<" at all, so neither "</script>" nor "<!--" can
// appear. "<" only occurs inside JSON strings, where \u003c means the same.
std::string ScriptSafeJson(const nlohmann::json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

struct Piece {
  std::string_view placeholder;
  std::string_view value;
  std::size_t at = 0;
};

// Fills every placeholder of the template in one pass, so no value can be
// taken for a placeholder. Each must occur exactly once: the template is
// ours, so anything else is a build defect, reported as such.
Result<std::string> Fill(std::string_view page, std::vector<Piece> pieces) {
  std::size_t size = page.size();
  for (Piece& p : pieces) {
    p.at = page.find(p.placeholder);
    if (p.at == std::string_view::npos ||
        page.find(p.placeholder, p.at + 1) != std::string_view::npos) {
      return Status::Internal(
          fmt::format("the report template must hold {} exactly once", p.placeholder));
    }
    size += p.value.size();
  }
  std::sort(pieces.begin(), pieces.end(),
            [](const Piece& a, const Piece& b) { return a.at < b.at; });
  std::string out;
  out.reserve(size);
  std::size_t from = 0;
  for (const Piece& p : pieces) {
    out.append(page.substr(from, p.at - from));
    out.append(p.value);
    from = p.at + p.placeholder.size();
  }
  out.append(page.substr(from));
  return out;
}

}  // namespace

Status CheckCanRender() {
  if (!web::kReportHtml.empty()) return Status::Ok();
  return Status::Unavailable(
      "this gpuwatch was built without the web bundle, so it cannot write HTML reports: "
      "run `npm ci --prefix web` and build again (scripts/install-deps.sh does both)");
}

Result<std::string> RenderHtml(const nlohmann::json& data) {
  if (Status s = CheckCanRender(); !s.ok()) return s;
  const std::string title = EscapeHtml(data.value("title", std::string("gpuwatch report")));
  const std::string json = ScriptSafeJson(data);
  return Fill(web::kReportHtml, {{"{{title}}", title},
                                 {"/*gpuwatch:css*/", web::kReportCss},
                                 {"/*gpuwatch:js*/", web::kReportJs},
                                 {"/*gpuwatch:data*/", json}});
}

Status CheckWritable(const std::string& path) {
  const bool existed = access(path.c_str(), F_OK) == 0;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::InvalidArgument(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  close(fd);
  if (!existed) unlink(path.c_str());
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return Status::Unavailable(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  }
  const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    const int err = errno;
    std::remove(tmp.c_str());
    return Status::Unavailable(fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return Status::Unavailable(fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
  return Status::Ok();
}

}  // namespace gpuwatch::report
