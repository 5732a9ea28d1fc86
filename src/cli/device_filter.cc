#include "cli/device_filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/ascii.h"
#include "core/printable.h"

namespace gpuwatch::cli {
namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// The comma-separated entries of `spec`, blanks around each trimmed.
std::vector<std::string_view> Entries(std::string_view spec) {
  std::vector<std::string_view> out;
  while (true) {
    const auto comma = spec.find(',');
    out.push_back(TrimBlanks(spec.substr(0, comma)));
    if (comma == std::string_view::npos) return out;
    spec.remove_prefix(comma + 1);
  }
}

}  // namespace

FieldMask FieldsToSelect(std::string_view spec) {
  FieldMask m;
  if (spec.empty()) return m;
  const auto entries = Entries(spec);
  if (!std::all_of(entries.begin(), entries.end(), AllDigits)) {
    Set(m, FieldId::kUuid);
    Set(m, FieldId::kPciBusId);
  }
  return m;
}

Result<std::vector<std::size_t>> SelectDevices(std::string_view spec, const Snapshot& snapshot) {
  std::vector<std::size_t> out;
  if (spec.empty()) {
    for (std::size_t i = 0; i < snapshot.devices.size(); ++i) out.push_back(i);
    return out;
  }
  for (std::string_view item : Entries(spec)) {
    if (item.empty()) return Status::InvalidArgument("--id: empty entry in the list");
    std::vector<std::size_t> matches;
    for (std::size_t i = 0; i < snapshot.devices.size(); ++i) {
      const DeviceFields& f = snapshot.devices[i].fields;
      if (AllDigits(item)) {
        if (std::to_string(snapshot.devices[i].index) == item) matches.push_back(i);
        continue;
      }
      const Reading& uuid = f[FieldId::kUuid];
      const Reading& bus = f[FieldId::kPciBusId];
      const std::string want = AsciiLower(item);
      if (uuid.is_text() && AsciiLower(uuid.text()).starts_with(want))
        matches.push_back(i);
      else if (bus.is_text() &&
               (AsciiLower(bus.text()) == want || AsciiLower(bus.text()).ends_with(want)))
        matches.push_back(i);
    }
    if (matches.empty()) {
      return Status::InvalidArgument(
          fmt::format("--id: no GPU matches \"{}\" (give an index 0..{}, a UUID or a PCI bus id)",
                      item, snapshot.devices.empty() ? 0 : snapshot.devices.size() - 1));
    }
    if (matches.size() > 1) {
      return Status::InvalidArgument(
          fmt::format("--id: \"{}\" matches {} GPUs; give more of it", item, matches.size()));
    }
    if (std::find(out.begin(), out.end(), matches[0]) == out.end()) out.push_back(matches[0]);
  }
  return out;
}

}  // namespace gpuwatch::cli
