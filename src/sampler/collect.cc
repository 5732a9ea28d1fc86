#include "sampler/collect.h"

namespace gpuwatch {
namespace {

void Attribute(host::ProcessResolver* resolver, DeviceSample& d) {
  if (resolver == nullptr) return;
  for (auto& p : d.processes) resolver->Resolve(p);
}

}  // namespace

Snapshot CollectOnce(Backend& backend, host::ProcessResolver* resolver,
                     const CollectOptions& options) {
  Snapshot s;
  s.time = std::chrono::system_clock::now();
  s.demo = backend.info().demo;
  s.source = (backend.SampleTime() ? "replay:" : "nvml:") + backend.info().library_path;
  s.host = backend.ReadHost();
  const int n = backend.DeviceCount();
  s.devices.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    DeviceSample& d = s.devices[static_cast<std::size_t>(i)];
    backend.ReadDevice(i, options.fields, options.processes, d);
    Attribute(resolver, d);
    // MIG processes are listed on the parent with their instance ids.
    const Reading& mig = d.fields[FieldId::kMigMode];
    if (options.mig && mig.is_number() && mig.number() == 1) {
      for (auto& m : backend.ReadMigDevices(i, options.fields, /*processes=*/false)) {
        Attribute(resolver, m);
        s.mig_devices.push_back(std::move(m));
      }
    }
  }
  if (resolver != nullptr) resolver->EndSample();
  if (auto recorded = backend.SampleTime()) s.time = *recorded;
  return s;
}

}  // namespace gpuwatch
