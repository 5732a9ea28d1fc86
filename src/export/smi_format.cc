#include "export/smi_format.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

#include "core/printable.h"

namespace gpuwatch::smi {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string_view UnitSuffix(Unit u) {
  switch (u) {
    case Unit::kBytes:
      return "MiB";
    case Unit::kWatts:
      return "W";
    case Unit::kHertz:
      return "MHz";
    case Unit::kRatio:
      return "%";
    default:
      return "";
  }
}

std::string WithUnit(std::string value, Unit u, bool units) {
  const auto suffix = UnitSuffix(u);
  if (!units || suffix.empty()) return value;
  return value + " " + std::string(suffix);
}

std::string HeaderName(const Column& c) {
  Unit u = Unit::kNone;
  if (c.field) u = Info(*c.field).unit;
  if (c.special == Column::Special::kUsedMemory) u = Unit::kBytes;
  const auto suffix = UnitSuffix(u);
  return suffix.empty() ? c.canonical : fmt::format("{} [{}]", c.canonical, suffix);
}

// The text after "call: " in a Reading's detail: the driver's own words.
std::string DriverWords(const Reading& r) {
  const std::string& d = r.detail();
  const auto colon = d.rfind(": ");
  return colon == std::string::npos ? d : d.substr(colon + 2);
}

std::string Join(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += ", ";
    line += cells[i];
  }
  return line;
}

struct Special {
  std::string_view name;
  std::string_view alias;
  Column::Special kind;
};

}  // namespace

Result<CsvFormat> ParseFormat(std::string_view spec) {
  CsvFormat f;
  bool csv = false;
  while (!spec.empty()) {
    const auto comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "csv") {
      csv = true;
    } else if (item == "noheader") {
      f.header = false;
    } else if (item == "nounits") {
      f.units = false;
    } else {
      return Status::InvalidArgument("Format modifier is not recognized.");
    }
  }
  if (!csv) return Status::InvalidArgument("Format modifier is not recognized.");
  return f;
}

namespace {

Result<std::vector<Column>> ParseList(std::string_view list, bool apps) {
  static constexpr Special kGpuSpecials[] = {{"timestamp", "", Column::Special::kTimestamp},
                                             {"count", "", Column::Special::kCount}};
  static constexpr Special kAppSpecials[] = {
      {"timestamp", "", Column::Special::kTimestamp},
      {"pid", "", Column::Special::kPid},
      {"process_name", "name", Column::Special::kProcessName},
      {"used_gpu_memory", "used_memory", Column::Special::kUsedMemory}};
  static constexpr std::pair<std::string_view, FieldId> kAppDeviceFields[] = {
      {"gpu_name", FieldId::kName},
      {"gpu_bus_id", FieldId::kPciBusId},
      {"gpu_serial", FieldId::kSerial},
      {"gpu_uuid", FieldId::kUuid}};

  std::vector<Column> out;
  while (true) {
    const auto comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    Column c;
    bool found = false;
    for (const auto& s :
         apps ? std::span<const Special>(kAppSpecials) : std::span<const Special>(kGpuSpecials)) {
      if (name == s.name || (!s.alias.empty() && name == s.alias)) {
        c.canonical = std::string(s.name);
        c.special = s.kind;
        found = true;
      }
    }
    if (!found && apps) {
      for (const auto& [n, id] : kAppDeviceFields) {
        if (name == n) {
          c.canonical = std::string(n);
          c.field = id;
          c.device_field_in_app_query = true;
          found = true;
        }
      }
    }
    if (!found && !apps) {
      if (auto id = FindBySmiName(name)) {
        c.canonical = std::string(Info(*id).smi_name);
        c.field = *id;
        found = true;
      }
    }
    if (!found) {
      return Status::InvalidArgument(
          fmt::format("Field \"{}\" is not a valid field to query.", name));
    }
    out.push_back(std::move(c));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace

Result<std::vector<Column>> ParseGpuFields(std::string_view list) { return ParseList(list, false); }
Result<std::vector<Column>> ParseAppFields(std::string_view list) { return ParseList(list, true); }

std::string Header(const std::vector<Column>& columns, const CsvFormat&) {
  std::vector<std::string> cells;
  for (const auto& c : columns) cells.push_back(HeaderName(c));
  return Join(cells);
}

std::string Timestamp(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y/%m/%d %H:%M:%S", &tm);
  return fmt::format("{}.{:03d}", buf, ms);
}

std::string FormatValue(FieldId id, const Reading& r, bool units) {
  const FieldInfo& info = Info(id);
  if (!r.ok()) {
    if (r.missing() == Missing::kNotSupported) return "[N/A]";
    if (r.missing() == Missing::kNotYetSampled || r.missing() == Missing::kImplausible)
      return "[N/A]";
    const std::string words = DriverWords(r);
    return words.empty() ? "[Unknown Error]" : "[" + words + "]";
  }
  if (r.is_text()) return r.text();
  const double v = r.number();
  switch (info.format) {
    case Format::kWords: {
      const auto w = WordFor(info, v);
      return w.empty() ? fmt::format("{}", v) : std::string(w);
    }
    case Format::kHex64:
      return fmt::format("0x{:016X}", static_cast<unsigned long long>(v));
    case Format::kPstate:
      return fmt::format("P{}", static_cast<int>(v));
    case Format::kPlain:
      break;
  }
  switch (info.unit) {
    case Unit::kBytes:
      // nvidia-smi rounds up to whole MiB (seen on an H200: reserved 615.06 MiB is
      // printed 616, free 138441.125 MiB is printed 138442).
      return WithUnit(fmt::format("{}", static_cast<long long>(std::ceil(v / kMiB - 1e-9))),
                      info.unit, units);
    case Unit::kWatts:
      return WithUnit(fmt::format("{:.2f}", v), info.unit, units);
    case Unit::kHertz:
      return WithUnit(fmt::format("{}", static_cast<long long>(std::llround(v / 1e6))), info.unit,
                      units);
    case Unit::kRatio:
      return WithUnit(fmt::format("{}", static_cast<long long>(std::llround(v * 100))), info.unit,
                      units);
    default:
      if (std::floor(v) == v) return fmt::format("{}", static_cast<long long>(v));
      return fmt::format("{}", v);
  }
}

std::string GpuRow(const std::vector<Column>& columns, const CsvFormat& format,
                   const Snapshot& snapshot, const DeviceSample& device) {
  std::vector<std::string> cells;
  for (const auto& c : columns) {
    switch (c.special) {
      case Column::Special::kTimestamp:
        cells.push_back(Timestamp(snapshot.time));
        continue;
      case Column::Special::kCount:
        cells.push_back(fmt::format("{}", snapshot.devices.size()));
        continue;
      default:
        break;
    }
    const FieldId id = *c.field;
    if (id == FieldId::kDisplayMode) {
      // nvidia-smi 580 no longer reports it, whatever NVML says.
      cells.push_back("[Requested functionality has been deprecated]");
      continue;
    }
    const Reading& r = Info(id).scope == Scope::kHost ? snapshot.host[id] : device.fields[id];
    cells.push_back(FormatValue(id, r, format.units));
  }
  return Printable(Join(cells));
}

std::string AppRow(const std::vector<Column>& columns, const CsvFormat& format,
                   const Snapshot& snapshot, const DeviceSample& device,
                   const ProcessSample& process) {
  std::vector<std::string> cells;
  for (const auto& c : columns) {
    switch (c.special) {
      case Column::Special::kTimestamp:
        cells.push_back(Timestamp(snapshot.time));
        break;
      case Column::Special::kPid:
        cells.push_back(fmt::format("{}", process.pid));
        break;
      case Column::Special::kProcessName: {
        const HostProcess& h = process.host;
        if (h.visibility != HostProcess::Visibility::kVisible) {
          cells.push_back("[Not Found]");
        } else {
          const auto space = h.command.find(' ');
          cells.push_back(h.command.empty() ? h.name : h.command.substr(0, space));
        }
        break;
      }
      case Column::Special::kUsedMemory:
        cells.push_back(FormatValue(FieldId::kProcessUsedMemoryBytes,
                                    process.fields[FieldId::kProcessUsedMemoryBytes],
                                    format.units));
        break;
      default:
        cells.push_back(FormatValue(*c.field, device.fields[*c.field], format.units));
        break;
    }
  }
  // Process names and command lines are anyone's text: no ESC or newline
  // reaches the terminal or splits a row.
  return Printable(Join(cells));
}

std::string HelpQueryGpu() {
  std::string out =
      "List of valid properties to query for the switch \"--query-gpu\" (gpuwatch supports these;\n"
      "headers and values are written as nvidia-smi writes them):\n\n"
      "\"timestamp\"\nThe timestamp of when the query was made in format \"YYYY/MM/DD "
      "HH:MM:SS.msec\".\n\n"
      "\"count\"\nThe number of NVIDIA GPUs in the system.\n\n";
  for (const auto& row : Catalogue()) {
    if (row.smi_name.empty() || row.scope == Scope::kProcess || row.id == FieldId::kDeviceCount)
      continue;
    out += fmt::format("\"{}\"", row.smi_name);
    if (!row.smi_alias.empty()) out += fmt::format(" or \"{}\"", row.smi_alias);
    out += fmt::format("\n{}\n\n", row.help);
  }
  return out;
}

}  // namespace gpuwatch::smi
