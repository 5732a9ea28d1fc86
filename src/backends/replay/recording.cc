#include "backends/replay/recording.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
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

}  // namespace gpuwatch::replay
