#include "backends/replay/recording.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string_view>

#include "backends/replay/recording_file.h"

namespace gpuwatch::replay {
namespace {

// Every SQLite 3 database file starts with these 16 bytes (NUL included).
constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

}  // namespace

Result<Recording> ReadRecording(const std::string& path) {
  Result<RecordingFile> file = RecordingFile::Open(path);  // a regular file
  if (!file) return file.error();
  Result<std::string> head = file->Head(kSqliteMagic.size());
  if (!head) return head.error();
  if (head->empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: empty file, neither a --jsonl recording nor a --db history database", path));
  }
  if (*head == kSqliteMagic) return ReadHistoryRecording(path);
  return ReadJsonlRecording(path);
}

std::string RecordedHostname(const std::string& path) {
  Result<RecordingFile> file = RecordingFile::Open(path);
  if (!file) return "";
  std::string line;
  // Events may come before the header (a mark before the first sample);
  // anything else first means it is not a JSON Lines recording.
  for (;;) {
    Result<bool> more = file->NextLine(line);
    if (!more || !*more) return "";
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
}

}  // namespace gpuwatch::replay
