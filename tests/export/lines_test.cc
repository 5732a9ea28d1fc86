#include "export/lines.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpuwatch {
namespace {

Snapshot Sample() {
  Snapshot s;
  s.time = std::chrono::system_clock::time_point(std::chrono::seconds(1795734000));
  s.sequence = 7;
  DeviceSample d;
  d.fields[FieldId::kUuid] = Reading::Text("GPU-1");
  d.fields[FieldId::kMemoryUsedRatio] = Reading::Number(0.682);
  d.fields[FieldId::kUtilizationGpuRatio] = Reading::Number(0.721);
  d.fields[FieldId::kTemperatureGpuCelsius] = Reading::Number(69);
  d.fields[FieldId::kPowerDrawWatts] = Reading::Number(412.4);
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(1024);
  d.fields[FieldId::kFanSpeedRatio] = Reading::Absent(Missing::kNotSupported, "x");
  s.devices.push_back(d);
  DeviceSample lost;
  lost.index = 1;
  lost.health = DeviceHealth::kLost;
  lost.health_detail = "GPU is lost";
  s.devices.push_back(lost);
  return s;
}

TEST(Lines, LogLineInTheSeedsFormat) {
  const Snapshot s = Sample();
  const std::string line = LogLine(s, s.devices[0]);
  EXPECT_EQ(line.substr(10), " GPU 0: Mem=68.2% Util=72.1% Temp=69°C Power=412W") << line;
  EXPECT_EQ(line[0], '[');
  EXPECT_NE(LogLine(s, s.devices[1]).find("GPU 1: LOST (GPU is lost)"), std::string::npos);
}

TEST(Lines, CsvHasStableColumnsAndEmptyCellsForNotAvailable) {
  const auto& cols = CsvColumns();
  ASSERT_GE(cols.size(), 10u);
  EXPECT_EQ(cols[0], "time");
  EXPECT_EQ(cols[2], "gpu");
  EXPECT_NE(std::find(cols.begin(), cols.end(), "memory_used_bytes"), cols.end());
  EXPECT_EQ(std::find(cols.begin(), cols.end(), "name"), cols.end())
      << "static facts are not columns";
  const auto rows = CsvRows(Sample());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(std::count(rows[0].begin(), rows[0].end(), ','), static_cast<long>(cols.size() - 1));
  EXPECT_EQ(rows[0].rfind("2026-11-26T23:00:00.000Z,7,0,GPU-1,", 0), 0u) << rows[0];
  const auto fan = std::find(cols.begin(), cols.end(), "fan_speed_ratio") - cols.begin();
  std::vector<std::string> cells;
  std::string cell;
  for (char c : rows[0] + ",") {
    if (c == ',') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  EXPECT_EQ(cells[static_cast<std::size_t>(fan)], "") << "N/A is empty, never 0";
}

TEST(Lines, AStaleGpuIsAGapInTheCsvAndMarkedInJsonLines) {
  Snapshot s = Sample();
  s.devices[0].health = DeviceHealth::kStale;
  s.devices[0].health_detail = "reading GPU 0 has not returned for 5 s";
  const auto rows = CsvRows(s);
  ASSERT_EQ(rows.size(), 1u) << "its last values are not written again as a new row";
  EXPECT_EQ(rows[0].rfind("2026-11-26T23:00:00.000Z,7,1,", 0), 0u) << rows[0];
  EXPECT_EQ(nlohmann::json::parse(JsonlSample(s))["devices"][0]["health"], "stale");
}

TEST(Lines, JsonlSampleAndEventParseBack) {
  const auto sample = nlohmann::json::parse(JsonlSample(Sample()));
  EXPECT_EQ(sample["type"], "sample");
  EXPECT_EQ(sample["sequence"], 7);
  EXPECT_EQ(sample["devices"][0]["fields"]["memory_used_bytes"], 1024);
  EXPECT_EQ(sample["devices"][0]["unavailable"]["fan_speed_ratio"], "not_supported");
  EXPECT_EQ(sample["devices"][1]["health"], "lost");
  const auto header = nlohmann::json::parse(JsonlHeader(Sample(), "h"));
  EXPECT_EQ(header["schema"], "gpuwatch.jsonl/1");
  EXPECT_EQ(header["devices"][0]["fields"]["uuid"], "GPU-1");
  Event e;
  e.kind = Event::Kind::kAlertFiring;
  e.severity = Severity::kWarning;
  e.source = "gpu_memory_high";
  e.gpu = 2;
  e.value = 0.93;
  e.message = "GPU 2 memory at 93%";
  const auto ev = nlohmann::json::parse(JsonlEvent(e));
  EXPECT_EQ(ev["type"], "event");
  EXPECT_EQ(ev["kind"], "alert_firing");
  EXPECT_EQ(ev["gpu"], 2);
  EXPECT_EQ(EventLogLine(e).substr(10), " alert_firing gpu_memory_high GPU 2: GPU 2 memory at 93%");
}

TEST(Lines, EventLogLineIsOneLineWithoutEscapes) {
  Event e;
  e.kind = Event::Kind::kLeakSuspected;
  e.source = "torch\x1b[31m";  // a framework name a job sent over its socket
  e.message = "pid 7 (python -c 'x'\n[12:00:00] alert_resolved forged: ok)\x1b[0m grows";
  EXPECT_EQ(EventLogLine(e).substr(10),
            " leak_suspected torch\\x1b[31m: pid 7 (python -c 'x'\\n[12:00:00] alert_resolved "
            "forged: ok)\\x1b[0m grows");
}

}  // namespace
}  // namespace gpuwatch
