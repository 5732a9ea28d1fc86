// Reads a gpuwatch.jsonl/1 recording line by line (jsonl_records.h reads
// each line). Other line types are skipped (a newer writer's); a malformed
// line of a known type, or a member of the wrong type, is an error naming
// file:line (and the field). A last line that is not JSON (the recorder
// stopped mid-line) and a line cut short in the middle (a write that
// stopped part-way, as on a full disk, when the writer could not cut it
// off again) are skipped with a note naming file:line.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "backends/replay/jsonl_records.h"
#include "backends/replay/recording.h"
#include "backends/replay/recording_file.h"
#include "core/json_members.h"

namespace gpuwatch::replay {
namespace {

using nlohmann::json;

// What the reader has seen so far of one file.
struct Progress {
  bool header = false;
  std::set<std::string> unknown_kinds;
  std::size_t unknown_events = 0;
};

// One line, a JSON object.
Status ReadLine(const json& j, const std::string& where, Recording& r, Progress& seen) {
  JsonMembers m;
  const std::string type = m.Text(j, "", "type");
  if (!m.error().empty())
    return Status::InvalidArgument(fmt::format("{}: field {}", where, m.error()));
  if (type == "header") {
    if (Status s = jsonl::ReadHeader(j, where, r); !s.ok()) return s;
    seen.header = true;
  } else if (type == "sample") {
    if (!seen.header)
      return Status::InvalidArgument(fmt::format("{}: a sample before the header line", where));
    Result<RecordedSample> s = jsonl::ReadSample(j, where);
    if (!s) return s.error();
    r.samples.push_back(std::move(*s));
  } else if (type == "event") {
    // May come before the header: a mark can arrive before the first sample.
    std::string unknown;
    Result<std::optional<Event>> e = jsonl::ReadEvent(j, where, unknown);
    if (!e) return e.error();
    if (*e) {
      r.events.push_back(std::move(**e));
    } else {
      ++seen.unknown_events;
      seen.unknown_kinds.insert(unknown);
    }
  } else if (type == "framework") {
    Result<FrameworkRecord> f = jsonl::ReadFramework(j, where);
    if (!f) return f.error();
    r.framework.push_back(std::move(*f));
  }  // another type: a newer writer's, skipped
  return Status::Ok();
}

// True when `line` is the start of a JSON object that ends before the
// object does: what a write that stopped part-way leaves.
bool CutShort(const std::string& line) {
  const auto start = line.find_first_not_of(" \t\r");
  if (start == std::string::npos || line[start] != '{') return false;
  try {
    const json whole = json::parse(line);
    return false;
  } catch (const json::parse_error& e) {
    return e.byte > line.size();  // the error is at the end of the input
  }
}

std::string LineList(const std::vector<int>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < 10; ++i)
    out += fmt::format("{}{}", i == 0 ? "" : ", ", lines[i]);
  if (lines.size() > 10) out += fmt::format(" and {} more", lines.size() - 10);
  return out;
}

// Lines of a text in memory, as RecordingFile gives a file's.
class TextLines {
 public:
  explicit TextLines(std::string_view text) : text_(text) {}
  Result<bool> NextLine(std::string& line) {
    if (at_ >= text_.size()) return false;
    const std::size_t nl = std::min(text_.find('\n', at_), text_.size());
    line.assign(text_.substr(at_, nl - at_));
    at_ = nl + 1;
    ++line_number_;
    return true;
  }
  int line_number() const { return line_number_; }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
  int line_number_ = 0;
};

// Reads a recording from `file` (RecordingFile or TextLines), named `path`
// in what it says.
template <typename Lines>
Result<Recording> ReadJsonlLines(Lines* file, const std::string& path) {
  Recording r;
  r.format = RecordingFormat::kJsonLines;
  r.info.library_path = path;
  Progress seen;
  // A line that is not a JSON object is an error, unless it is the last
  // one (held here until the next line says) or cut short (skipped).
  std::optional<Status> bad;
  bool bad_cut_short = false;
  int bad_number = 0;
  std::vector<int> cut_short;
  std::string line;
  for (;;) {
    Result<bool> more = file->NextLine(line);
    if (!more) return more.error();
    if (!*more) break;
    if (line.empty()) continue;
    if (bad) {
      if (!bad_cut_short) return *bad;
      cut_short.push_back(bad_number);
      bad.reset();
    }
    const auto where = fmt::format("{}:{}", path, file->line_number());
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      bad = Status::InvalidArgument(fmt::format(
          "{}: not a JSON object (is this a --jsonl recording or a --db history?)", where));
      bad_cut_short = CutShort(line);
      bad_number = file->line_number();
      continue;
    }
    try {
      if (Status s = ReadLine(j, where, r, seen); !s.ok()) return s;
    } catch (const json::exception& e) {  // what the typed reads above do not catch
      return Status::InvalidArgument(fmt::format("{}: malformed line ({})", where, e.what()));
    }
  }
  const bool playable = seen.header && !r.samples.empty();
  if (bad && !playable) return *bad;  // the more useful error
  if (!seen.header)
    return Status::InvalidArgument(
        fmt::format("{}: no header line (is this a --jsonl recording?)", path));
  if (r.samples.empty()) return Status::InvalidArgument(fmt::format("{}: no samples", path));
  if (cut_short.size() == 1) {
    r.notes.push_back(fmt::format(
        "{}:{}: a line cut short (a write that stopped part-way, as on a full disk): skipped", path,
        cut_short[0]));
  } else if (!cut_short.empty()) {
    r.notes.push_back(fmt::format(
        "{}: {} lines cut short (writes that stopped part-way, as on a full disk) skipped: "
        "lines {}",
        path, cut_short.size(), LineList(cut_short)));
  }
  if (bad) {
    r.notes.push_back(fmt::format(
        "{}:{}: the last line is not a whole JSON object (the recording was cut off while it "
        "was written?): skipped",
        path, bad_number));
  }
  if (seen.unknown_events > 0) {
    std::string kinds;
    for (const auto& k : seen.unknown_kinds) kinds += (kinds.empty() ? "" : ", ") + k;
    r.notes.push_back(fmt::format("{} event(s) of kinds this gpuwatch does not know ({}) skipped",
                                  seen.unknown_events, kinds));
  }
  const auto by_time = [](const auto& a, const auto& b) { return a.time < b.time; };
  std::stable_sort(r.events.begin(), r.events.end(), by_time);
  std::stable_sort(r.framework.begin(), r.framework.end(), by_time);
  return r;
}

}  // namespace

Result<Recording> ReadJsonlRecording(const std::string& path) {
  Result<RecordingFile> file = RecordingFile::Open(path);
  if (!file) return file.error();
  return ReadJsonlLines(&*file, path);
}

Result<Recording> ReadJsonlText(std::string_view text, const std::string& name) {
  TextLines lines(text);
  return ReadJsonlLines(&lines, name);
}

}  // namespace gpuwatch::replay
