#include "backends/replay/replay_backend.h"

#include <fmt/format.h>

namespace gpuwatch::replay {

Result<std::unique_ptr<ReplayBackend>> ReplayBackend::Open(const ReplayOptions& options) {
  Result<Recording> recording = ReadRecording(options.path);
  if (!recording) return recording.error();
  return std::unique_ptr<ReplayBackend>(new ReplayBackend(options, std::move(*recording)));
}

void ReplayBackend::Advance() {
  const auto& samples = recording_.samples;
  if (!started_) {
    started_ = true;
    play_start_ = std::chrono::steady_clock::now();
    return;  // the first round shows the first sample
  }
  if (options_.speed <= 0) {
    if (cursor_ + 1 < samples.size()) ++cursor_;
    return;
  }
  const auto elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - play_start_) *
      options_.speed;
  const auto target = samples.front().time +
                      std::chrono::duration_cast<std::chrono::system_clock::duration>(elapsed);
  while (cursor_ + 1 < samples.size() && samples[cursor_ + 1].time <= target) ++cursor_;
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
  out.health_detail = out.health == DeviceHealth::kLost ? "lost in the recording" : "";
  if (processes)
    out.processes = recorded != nullptr ? recorded->processes : std::vector<ProcessSample>{};
}

std::optional<std::chrono::system_clock::time_point> ReplayBackend::SampleTime() const {
  return recording_.samples[cursor_].time;
}

bool ReplayBackend::Finished() const {
  return started_ && cursor_ + 1 >= recording_.samples.size();
}

}  // namespace gpuwatch::replay
