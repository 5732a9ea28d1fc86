#include "backends/replay/recording.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string_view>

namespace gpuwatch::replay {
namespace {

// Every SQLite 3 database file starts with these 16 bytes (NUL included).
constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

}  // namespace

Result<Recording> ReadRecording(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument(
        fmt::format("{} is a directory, not a recording (--jsonl) or a history (--db)", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot read the recording {}", path));
  char head[kSqliteMagic.size()] = {};
  in.read(head, sizeof head);
  const auto got = static_cast<std::size_t>(in.gcount());
  if (got == 0) {
    return Status::InvalidArgument(fmt::format(
        "{}: empty file, neither a --jsonl recording nor a --db history database", path));
  }
  if (std::string_view(head, got) == kSqliteMagic) return ReadHistoryRecording(path);
  return ReadJsonlRecording(path);
}

std::string RecordedHostname(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  // Events may come before the header (a mark before the first sample);
  // anything else first means it is not a JSON Lines recording.
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.starts_with(kSqliteMagic)) return "";
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return "";
    const auto type = j.find("type");
    if (type == j.end() || !type->is_string()) return "";
    if (*type == "header") {
      const auto name = j.find("hostname");
      return name != j.end() && name->is_string() ? name->get<std::string>() : "";
    }
    if (*type != "event") return "";
  }
  return "";
}

}  // namespace gpuwatch::replay
