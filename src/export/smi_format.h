// nvidia-smi's --query-gpu / --query-compute-apps language: field names,
// headers with units, and values written exactly as nvidia-smi writes them
// (as nvidia-smi 580 on an H200 writes them; tests/golden/query_*.csv). Pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"

namespace gpuwatch::smi {

struct CsvFormat {
  bool header = true;
  bool units = true;
};
// Parses "csv,noheader,nounits". Error text as nvidia-smi's.
Result<CsvFormat> ParseFormat(std::string_view spec);

// One requested column: a catalogue field, or one of the few computed ones.
struct Column {
  enum class Special { kNone, kTimestamp, kCount, kPid, kProcessName, kUsedMemory };
  std::string canonical;  // the name nvidia-smi prints in the header
  std::optional<FieldId> field;
  Special special = Special::kNone;
  bool device_field_in_app_query = false;  // gpu_uuid etc. in --query-compute-apps
};

// Parses "index,memory.used,...". An unknown name is an error whose message
// is exactly nvidia-smi's: Field "bogus" is not a valid field to query.
Result<std::vector<Column>> ParseGpuFields(std::string_view list);
Result<std::vector<Column>> ParseAppFields(std::string_view list);

std::string Header(const std::vector<Column>& columns, const CsvFormat& format);
// One line per device (physical GPUs, in index order).
std::string GpuRow(const std::vector<Column>& columns, const CsvFormat& format,
                   const Snapshot& snapshot, const DeviceSample& device);
std::string AppRow(const std::vector<Column>& columns, const CsvFormat& format,
                   const Snapshot& snapshot, const DeviceSample& device,
                   const ProcessSample& process);

// "2026/11/30 06:13:55.355" in local time.
std::string Timestamp(std::chrono::system_clock::time_point t);
// A field's value as nvidia-smi writes it ("83.23 W", "[N/A]", "Enabled").
std::string FormatValue(FieldId id, const Reading& r, bool units);
// The list printed by --help-query-gpu.
std::string HelpQueryGpu();

}  // namespace gpuwatch::smi
