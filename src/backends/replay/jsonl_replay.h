// ReplayBackend: plays a JSON Lines recording (gpuwatch.jsonl/1, written by
// `watch --jsonl` or `run --jsonl`) as if it were the GPUs, so every command
// works on it (`--replay FILE`). Static facts come from the header line, the
// rest from the samples; processes keep the attribution recorded with them.
// Playback follows the recording's own clock times `speed` (1 = as recorded),
// or, with speed 0, moves one sample per read of device 0. Past the end it
// stays on the last sample and reports Finished(). One owner thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gpuwatch/backend.h"

namespace gpuwatch::replay {

struct ReplayOptions {
  std::string path;
  double speed = 1.0;  // 0: as fast as samples are read
};

class ReplayBackend final : public Backend {
 public:
  // Reads the whole file; a malformed line is an error naming file:line.
  static Result<std::unique_ptr<ReplayBackend>> Open(const ReplayOptions& options);

  const BackendInfo& info() const override { return info_; }
  HostFields ReadHost() override { return host_; }
  int DeviceCount() const override { return static_cast<int>(static_.size()); }
  void ReadDevice(int index, const FieldMask& which, bool processes, DeviceSample& out) override;
  std::vector<DeviceSample> ReadMigDevices(int, const FieldMask&, bool) override { return {}; }
  std::optional<std::chrono::system_clock::time_point> SampleTime() const override;
  bool Finished() const override;
  std::size_t samples() const { return samples_.size(); }

  struct Sample {
    std::chrono::system_clock::time_point time;
    std::vector<DeviceSample> devices;
  };

 private:
  ReplayBackend() = default;
  void Advance();

  ReplayOptions options_;
  BackendInfo info_;
  HostFields host_;
  std::vector<DeviceFields> static_;  // per device, from the header
  std::vector<Sample> samples_;
  std::size_t cursor_ = 0;
  bool started_ = false;
  std::chrono::steady_clock::time_point play_start_;
};

}  // namespace gpuwatch::replay
