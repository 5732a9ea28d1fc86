// libFuzzer target: gpuwatch's JSON read back from outside, the lines of a
// recording (`--replay FILE`, any file a user hands over) and a remote
// daemon's API documents (`top --remote`, whatever answers on that port).
// Both read devices and processes with core/sample_json; every reader must
// refuse or accept an input without crashing, and an error must say where.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "backends/replay/jsonl_records.h"
#include "tui/remote_api.h"

namespace {

void MustSayWhere(const gpuwatch::Status& s) {
  if (!s.ok() && s.message().rfind("f:1", 0) != 0 && s.message().rfind("h:", 0) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuwatch;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  replay::Recording r;
  MustSayWhere(replay::jsonl::ReadHeader(j, "f:1", r));
  if (auto s = replay::jsonl::ReadSample(j, "f:1"); !s) MustSayWhere(s.error());
  std::string unknown;
  if (auto e = replay::jsonl::ReadEvent(j, "f:1", unknown); !e) MustSayWhere(e.error());
  if (auto f = replay::jsonl::ReadFramework(j, "f:1"); !f) MustSayWhere(f.error());
  if (auto h = tui::ParseSnapshotDocument(j, "h"); !h) MustSayWhere(h.error());
  if (auto e = tui::ParseEventsDocument(j, "h"); !e) MustSayWhere(e.error());
  return 0;
}
