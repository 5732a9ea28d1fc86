#include "backends/replay/replay_backend.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuwatch::replay {

Result<std::unique_ptr<ReplayBackend>> ReplayBackend::Open(const ReplayOptions& options) {
  Result<Recording> recording = ReadRecording(options.path);
  if (!recording) return recording.error();
  return Play(options, std::move(*recording));
}

std::unique_ptr<ReplayBackend> ReplayBackend::Play(const ReplayOptions& options,
                                                   Recording recording) {
  recording.info.recording = true;
  return std::unique_ptr<ReplayBackend>(new ReplayBackend(options, std::move(recording)));
}

void ReplayBackend::Advance() {
  if (!started_) {
    started_ = true;
    play_start_ = std::chrono::steady_clock::now();
    return;  // the first round shows the first sample
  }
  if (cursor_ + 1 < recording_.samples.size()) ++cursor_;
}

void ReplayBackend::ReadDevice(int index, const FieldMask& which, bool processes,
                               DeviceSample& out) {
  if (index == 0) Advance();
  out.index = index;
  if (index < 0 || index >= DeviceCount()) {
    out.health = DeviceHealth::kError;
    out.health_detail = fmt::format("no GPU with index {} in the recording", index);
    return;
  }
  const DeviceFields& facts = recording_.facts[static_cast<std::size_t>(index)];
  const Sample& s = recording_.samples[cursor_];
  const DeviceSample* recorded = nullptr;
  for (const auto& d : s.devices) {
    if (d.index == index) recorded = &d;
  }
  const FieldRange r = RangeOf(Scope::kDevice);
  for (std::size_t i = r.first; i < r.first + r.count; ++i) {
    const auto id = static_cast<FieldId>(i);
    if (!which.test(i)) continue;
    out.fields[id] = Info(id).cadence == Cadence::kStatic ? facts[id]
                     : recorded != nullptr
                         ? recorded->fields[id]
                         : Reading::Absent(Missing::kNotYetSampled, "not in the recording");
  }
  out.health = recorded != nullptr ? recorded->health : DeviceHealth::kOk;
  out.health_detail = recorded != nullptr && !recorded->health_detail.empty()
                          ? recorded->health_detail
                      : out.health == DeviceHealth::kLost ? "lost in the recording"
                                                          : "";
  if (processes)
    out.processes = recorded != nullptr ? recorded->processes : std::vector<ProcessSample>{};
}

std::optional<std::chrono::system_clock::time_point> ReplayBackend::SampleTime() const {
  return recording_.samples[cursor_].time;
}

bool ReplayBackend::Finished() const {
  return started_ && cursor_ + 1 >= recording_.samples.size();
}

std::optional<std::chrono::steady_clock::time_point> ReplayBackend::NextSampleDue() const {
  const auto& samples = recording_.samples;
  if (!started_ || !(options_.speed > 0) || cursor_ + 1 >= samples.size())
    return std::chrono::steady_clock::time_point::min();
  const std::chrono::duration<double> recorded = samples[cursor_ + 1].time - samples.front().time;
  if (!(recorded.count() > 0)) return play_start_;  // a clock that stepped back: at once
  // A very slow speed is capped at ~3 years from the start, within the clock's range.
  const std::chrono::duration<double> after =
      std::min(recorded / options_.speed, std::chrono::duration<double>(1e8));
  return play_start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(after);
}

}  // namespace gpuwatch::replay
