// ReplayBackend: plays a recording as if it were the GPUs, so every command
// works on it (`--replay FILE`). The file is either a JSON Lines recording
// (gpuwatch.jsonl/1, written by `watch --jsonl` or `run --jsonl`) or a SQLite
// history (`--db`); recording.h reads both into the same samples.
// Static facts come from the JSON Lines header or the history's devices
// table, the rest from the samples; processes keep the attribution recorded
// with them. Each read of device 0 moves to the next sample, so every
// sample is played once and in order; NextSampleDue() says when the next
// one is due on the recording's own clock divided by `speed`, counted from
// the first read (1 = as recorded, 10 = ten times faster, 0 = at once).
// Past the end it stays on the last sample and reports Finished().
// One owner thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/replay/recording.h"
#include "gpuwatch/backend.h"

namespace gpuwatch::replay {

struct ReplayOptions {
  std::string path;
  double speed = 1.0;  // 0: every sample due at once (as fast as it is read)
};

class ReplayBackend final : public Backend {
 public:
  using Format = RecordingFormat;
  using Sample = RecordedSample;

  // Reads the whole file (either format, told apart by content; a regular
  // file only). A malformed JSON line is an error naming file:line (and the
  // field), except a bad last line or a line cut short, skipped with a note;
  // a file that is not a gpuwatch recording or history, or holds no
  // samples, an error naming it.
  static Result<std::unique_ptr<ReplayBackend>> Open(const ReplayOptions& options);
  // Plays a recording already read (ReadJsonlText); options.path names it.
  static std::unique_ptr<ReplayBackend> Play(const ReplayOptions& options, Recording recording);

  const BackendInfo& info() const override { return recording_.info; }
  HostFields ReadHost() override { return recording_.host; }
  int DeviceCount() const override { return static_cast<int>(recording_.facts.size()); }
  void ReadDevice(int index, const FieldMask& which, bool processes, DeviceSample& out) override;
  std::vector<DeviceSample> ReadMigDevices(int, const FieldMask&, bool) override { return {}; }
  std::optional<std::chrono::system_clock::time_point> SampleTime() const override;
  bool Finished() const override;
  // The first sample at once; sample i at the first read plus (its recorded
  // time - the first sample's) / speed; every sample at once with speed 0.
  std::optional<std::chrono::steady_clock::time_point> NextSampleDue() const override;

  std::size_t samples() const { return recording_.samples.size(); }
  Format format() const { return recording_.format; }
  const std::string& hostname() const { return recording_.hostname; }
  // Every recorded event in time order, marks (step, epoch, phase) included
  // as Event::Kind::kMark: source the mark kind, message "step 120", value
  // the number when there is one.
  const std::vector<Event>& events() const { return recording_.events; }
  // Framework memory reports in time order (JSON Lines only for now).
  const std::vector<FrameworkRecord>& framework() const { return recording_.framework; }
  // What the file holds that is not replayed, or only in part: raw samples
  // gone to retention, MIG devices, event kinds this version does not know.
  const std::vector<std::string>& notes() const { return recording_.notes; }

 private:
  ReplayBackend(ReplayOptions options, Recording recording)
      : options_(std::move(options)), recording_(std::move(recording)) {}
  void Advance();

  const ReplayOptions options_;
  const Recording recording_;
  std::size_t cursor_ = 0;
  bool started_ = false;
  std::chrono::steady_clock::time_point play_start_;  // the first read
};

}  // namespace gpuwatch::replay
