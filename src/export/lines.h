// Per-sample text outputs of `watch` and `run`, pure functions of a snapshot:
//   log lines   "[14:23:05] GPU 0: Mem=68.2% Util=72.1% Temp=69°C Power=412W"
//   CSV         stable columns (docs/outputs.md), one row per GPU per sample
//   JSON Lines  schema "gpuwatch.jsonl/1": a header line with the static facts,
//               then one "sample" line per snapshot and one "event" line per event
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch {

// Log lines are one line each: control characters in messages (process
// names, what a job sent) are written out (core/printable.h).
std::string LogLine(const Snapshot& snapshot, const DeviceSample& device);
std::string EventLogLine(const Event& event);

// The CSV columns: time, sequence, gpu, uuid, then every device field sampled
// over time (cadence interval, slow and costly) by catalogue key.
const std::vector<std::string>& CsvColumns();
std::string CsvHeader();
std::vector<std::string> CsvRows(const Snapshot& snapshot);

inline constexpr std::string_view kJsonlSchema = "gpuwatch.jsonl/1";
std::string JsonlHeader(const Snapshot& first, const std::string& hostname);
// What a sample line keeps of why a value is missing: a recording the reason
// ("not_supported"); a daemon's answer (transport/answer_socket.h), which
// a one-shot command shows as if it had read the GPUs itself, also the
// driver's words and each GPU's health detail.
enum class JsonlDetail { kRecording, kAnswer };
std::string JsonlSample(const Snapshot& snapshot, JsonlDetail detail = JsonlDetail::kRecording);
std::string JsonlEvent(const Event& event);
// Framework memory a training process reported (GPUWATCH_SOCKET): allocated,
// reserved, ... in bytes, and the reporter's pid when known.
std::string JsonlFramework(std::chrono::system_clock::time_point time, int gpu,
                           const std::string& framework,
                           const std::map<std::string, double, std::less<>>& bytes,
                           std::optional<std::uint32_t> pid = std::nullopt);
nlohmann::json EventToJson(const Event& event);

}  // namespace gpuwatch
