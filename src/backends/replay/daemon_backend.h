// DaemonBackend: a running `gpuwatch serve`'s latest sample as the GPUs, for
// the one-shot commands (`gpuwatch`, `query`, `select`). The driver is not
// opened, so an answer costs little more than starting the process
// (docs/serve.md, "Warm answers"). The daemon's answer (its answer socket,
// transport/answer_socket.h) is an identity line, then a gpuwatch.jsonl/1
// header and one sample written with JsonlDetail::kAnswer. Each round after
// the first (a read of device 0) asks the daemon again, so loops (`-l`,
// `select --wait`) follow its samples. One owner thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "backends/replay/replay_backend.h"
#include "gpuwatch/backend.h"

namespace gpuwatch::replay {

// The first line of a daemon's answer.
struct DaemonIdentity {
  std::string source;   // what selects the GPUs it reads (engine's GpuSourceKey)
  std::string library;  // the NVML library it loaded
  std::chrono::milliseconds interval{1000};
  bool mig = false;  // it shows MIG devices, which its answer does not carry
};
std::string DaemonIdentityLine(const DaemonIdentity& identity);

struct DaemonExpectation {
  std::string socket;  // where the daemon answers
  std::string source;  // the GPUs the caller would read; the daemon's must be the same
  std::chrono::milliseconds timeout{500};
};

class DaemonBackend final : public Backend {
 public:
  // Unavailable saying why when no daemon the caller can believe answers at
  // the socket (FetchAnswer), it reads other GPUs, shows MIG devices, or its
  // latest sample is older than three of its intervals (at least 5 s, a
  // daemon that stopped sampling): the caller then reads the GPUs itself.
  // InvalidArgument when the answer does not parse.
  static Result<std::unique_ptr<DaemonBackend>> Connect(const DaemonExpectation& expected);

  const BackendInfo& info() const override { return info_; }
  HostFields ReadHost() override { return answer_->ReadHost(); }
  int DeviceCount() const override { return answer_->DeviceCount(); }
  // A daemon that stops answering mid-loop leaves its last sample, every GPU
  // marked stale with the reason.
  void ReadDevice(int index, const FieldMask& which, bool processes, DeviceSample& out) override;
  std::vector<DeviceSample> ReadMigDevices(int, const FieldMask&, bool) override { return {}; }
  // When the daemon took its sample.
  std::optional<std::chrono::system_clock::time_point> SampleTime() const override {
    return answer_->SampleTime();
  }

 private:
  DaemonBackend(DaemonExpectation expected, BackendInfo info, std::unique_ptr<ReplayBackend> answer)
      : expected_(std::move(expected)), info_(std::move(info)), answer_(std::move(answer)) {}

  const DaemonExpectation expected_;
  BackendInfo info_;
  std::unique_ptr<ReplayBackend> answer_;  // the latest answer, played
  bool asked_again_ = false;  // a round after the first: the next read of device 0 asks again
  std::string stopped_;       // why the daemon did not answer the last round ("" it did)
};

// Reads one answer: its identity and recording (`name` stands for it in
// errors). Pure; exposed for tests.
struct DaemonAnswer {
  DaemonIdentity identity;
  Recording recording;
};
Result<DaemonAnswer> ParseDaemonAnswer(std::string_view text, const std::string& name);

}  // namespace gpuwatch::replay
