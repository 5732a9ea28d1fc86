// The lines of a gpuwatch.jsonl/1 recording (src/export/lines.cc writes
// them), each a JSON object, read into a Recording's parts. `where` is
// "FILE:LINE"; every error starts with it and names what is wrong: the
// field and the type it should have had, or the value out of range.
// Never throws. jsonl_replay.cc reads the file line by line with them.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "backends/replay/recording.h"
#include "gpuwatch/event.h"
#include "gpuwatch/status.h"

namespace gpuwatch::replay::jsonl {

// The header: schema, hostname, demo, host facts and each GPU's static
// facts, added to `r` (a file recorded twice holds two headers).
Status ReadHeader(const nlohmann::json& j, const std::string& where, Recording& r);
// A "sample" line: every GPU's fields, reasons and processes at one time.
Result<RecordedSample> ReadSample(const nlohmann::json& j, const std::string& where);
// An "event" line (EventToJson). Nothing when its kind is one this version
// does not know (`unknown_kind` says which).
Result<std::optional<Event>> ReadEvent(const nlohmann::json& j, const std::string& where,
                                       std::string& unknown_kind);
// {"type":"framework","time":...,"gpu":0,"framework":"torch","bytes":{"allocated":1}}
Result<FrameworkRecord> ReadFramework(const nlohmann::json& j, const std::string& where);

}  // namespace gpuwatch::replay::jsonl
