#include "sampler/collect.h"

namespace gpuwatch {
namespace {

void Attribute(host::ProcessResolver* resolver, DeviceSample& d) {
  if (resolver == nullptr) return;
  for (auto& p : d.processes) resolver->Resolve(p);
}

}  // namespace

void ReadGpu(Backend& backend, int index, const FieldMask& fields, const FieldMask* mig_fields,
             bool processes, DeviceSample& device, std::vector<DeviceSample>& mig) {
  backend.ReadDevice(index, fields, processes, device);
  mig.clear();
  const Reading& mode = device.fields[FieldId::kMigMode];
  // MIG processes are listed on the parent with their instance ids.
  if (mig_fields != nullptr && mode.is_number() && mode.number() == 1) {
    mig = backend.ReadMigDevices(index, *mig_fields, /*processes=*/false);
  }
}

Snapshot StartSnapshot(const Backend& backend) {
  Snapshot s;
  s.time = std::chrono::system_clock::now();
  s.demo = backend.info().demo;
  s.source = (backend.info().recording ? "replay:" : "nvml:") + backend.info().library_path;
  return s;
}

void FinishSnapshot(const Backend& backend, Snapshot& snapshot) {
  if (auto recorded = backend.SampleTime()) snapshot.time = *recorded;
}

Snapshot CollectOnce(Backend& backend, host::ProcessResolver* resolver,
                     const CollectOptions& options) {
  Snapshot s = StartSnapshot(backend);
  s.host = backend.ReadHost();
  const int n = backend.DeviceCount();
  s.devices.resize(static_cast<std::size_t>(n));
  std::vector<DeviceSample> mig;
  for (int i = 0; i < n; ++i) {
    DeviceSample& d = s.devices[static_cast<std::size_t>(i)];
    ReadGpu(backend, i, options.fields, options.mig ? &options.fields : nullptr, options.processes,
            d, mig);
    Attribute(resolver, d);
    for (auto& m : mig) {
      Attribute(resolver, m);
      s.mig_devices.push_back(std::move(m));
    }
  }
  if (resolver != nullptr) resolver->EndSample();
  FinishSnapshot(backend, s);
  return s;
}

}  // namespace gpuwatch
