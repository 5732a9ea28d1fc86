// libFuzzer target: the nvidia-smi query language (field lists, --format) and
// --id selection. Any input must give a value or a clean error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cli/device_filter.h"
#include "export/smi_format.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuwatch;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto gpu = smi::ParseGpuFields(text);
  auto apps = smi::ParseAppFields(text);
  auto format = smi::ParseFormat(text);
  static const Snapshot snapshot = [] {
    Snapshot s;
    for (int i = 0; i < 3; ++i) {
      DeviceSample d;
      d.index = i;
      d.fields[FieldId::kUuid] = Reading::Text("GPU-" + std::to_string(i) + "abc");
      d.fields[FieldId::kPciBusId] = Reading::Text("00000000:0" + std::to_string(i) + ":00.0");
      s.devices.push_back(d);
    }
    return s;
  }();
  auto ids = cli::SelectDevices(text, snapshot);
  if (gpu) {
    const std::string header = smi::Header(*gpu, {});
    const std::string row = smi::GpuRow(*gpu, {}, snapshot, snapshot.devices[0]);
    (void)header;
    (void)row;
  }
  if (ids) {
    for (std::size_t i : *ids) {
      if (i >= snapshot.devices.size()) __builtin_trap();
    }
  }
  (void)apps;
  (void)format;
  return 0;
}
