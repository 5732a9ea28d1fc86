// Hand-built snapshots for rule tests.
#pragma once

#include <chrono>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "gpuwatch/snapshot.h"

namespace gpuwatch::rules::testing {

inline std::chrono::system_clock::time_point At(double seconds) {
  return std::chrono::system_clock::time_point{} + std::chrono::seconds(1'700'000'000) +
         std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

inline DeviceSample Device(int index, std::initializer_list<std::pair<FieldId, double>> values) {
  DeviceSample d;
  d.index = index;
  for (const auto& [id, v] : values) d.fields[id] = Reading::Number(v);
  return d;
}

inline ProcessSample Process(std::uint32_t pid, std::uint64_t start_ticks, double used_bytes,
                             std::string user = "alice", std::string command = "python train.py") {
  ProcessSample p;
  p.pid = pid;
  p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(used_bytes);
  p.host.visibility = HostProcess::Visibility::kVisible;
  p.host.start_ticks = start_ticks;
  p.host.user = std::move(user);
  p.host.command = std::move(command);
  p.host.name = "python";
  return p;
}

inline Snapshot Snap(double seconds, std::vector<DeviceSample> devices) {
  Snapshot s;
  s.time = At(seconds);
  s.devices = std::move(devices);
  return s;
}

}  // namespace gpuwatch::rules::testing
