// A recording loaded into memory, whatever file it came from: a JSON Lines
// recording (gpuwatch.jsonl/1, `--jsonl`) or a SQLite history (`--db`).
// ReplayBackend plays the samples; the report reads the events and the
// framework memory. ReadRecording() is the one place that tells the two
// formats apart (by content, not by file name).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuwatch/backend.h"
#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"

namespace gpuwatch::replay {

// GPU indices a recording may hold are 0 .. kMaxRecordedGpus - 1, and a GPU
// at most kMaxRecordedProcesses processes in one sample: a file claiming
// more is refused rather than read into memory (100000 GPUs of 4.5 KB each).
inline constexpr int kMaxRecordedGpus = 64;
inline constexpr std::size_t kMaxRecordedProcesses = 4096;

enum class RecordingFormat {
  kJsonLines,  // gpuwatch.jsonl/1
  kHistory,    // SQLite history written by store::HistoryWriter
};

// All devices at one recorded time, by device index.
struct RecordedSample {
  std::chrono::system_clock::time_point time;
  std::vector<DeviceSample> devices;
};

// Framework memory a training process reported (GPUWATCH_SOCKET), in bytes
// by kind: "allocated", "reserved", ...
struct FrameworkRecord {
  std::chrono::system_clock::time_point time;
  int gpu = 0;
  std::string framework;  // "torch", "jax", ...
  std::map<std::string, double> bytes;
  std::optional<std::uint32_t> pid;  // the reporter's, when recorded
};

struct Recording {
  RecordingFormat format = RecordingFormat::kJsonLines;
  BackendInfo info;
  std::string hostname;  // "" when the file does not say
  HostFields host;
  std::vector<DeviceFields> facts;         // static facts, indexed by device index
  std::vector<RecordedSample> samples;     // in time order; never empty
  std::vector<Event> events;               // in time order, marks as Event::Kind::kMark
  std::vector<FrameworkRecord> framework;  // in time order
  // What the file holds that is not replayed, or replayed only in part
  // (retention, MIG devices, unknown event kinds): one sentence each.
  std::vector<std::string> notes;
};

// Reads `path` as whichever format its first bytes say (SQLite files start
// with "SQLite format 3\0"; anything else is read as JSON Lines). Only a
// regular file is read (not /dev/zero, not a FIFO). Errors name the file:
// NotFound when it cannot be read, InvalidArgument when it is not a regular
// file, not a gpuwatch recording or holds no samples; a bad JSON line is an
// error naming file:line and the field, except a last line that is not
// JSON (a recording cut off while it was written) and a line cut short in
// the middle (a write that stopped part-way): those are skipped, with a
// note naming file:line.
Result<Recording> ReadRecording(const std::string& path);

// The hostname `path` names in its JSON Lines header, read without its
// samples (so a front end can label its outputs before it plays the file).
// "" when the header names none, for a SQLite history (it keeps no
// hostname), and when the file cannot be read (ReadRecording says why).
std::string RecordedHostname(const std::string& path);

// The two readers behind it (jsonl_replay.cc, history_replay.cc).
Result<Recording> ReadJsonlRecording(const std::string& path);
// A JSON Lines recording held in memory (a daemon's answer), read as a file
// would be; `name` stands for the file in what it says.
Result<Recording> ReadJsonlText(std::string_view text, const std::string& name);
Result<Recording> ReadHistoryRecording(const std::string& path);

}  // namespace gpuwatch::replay
