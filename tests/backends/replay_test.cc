// ReplayBackend on recordings written by the JSON Lines serializer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../transport/file_size_limit.h"
#include "backends/replay/replay_backend.h"
#include "export/lines.h"
#include "transport/line_file.h"

namespace gpuwatch {
namespace {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
const auto kT0 = std::chrono::system_clock::time_point(seconds(1795734000));

Snapshot Sample(int n) {
  Snapshot s;
  s.time = kT0 + seconds(n);
  s.sequence = static_cast<std::uint64_t>(n + 1);
  s.host[FieldId::kDriverVersion] = Reading::Text("580.159.04");
  DeviceSample d;
  d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(100);
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(10.0 * (n + 1));
  d.fields[FieldId::kFanSpeedRatio] = Reading::Absent(Missing::kNotSupported, "x");
  ProcessSample p;
  p.pid = 42;
  p.host.visibility = HostProcess::Visibility::kVisible;
  p.host.user = "ann";
  p.host.command = "python train.py";
  p.host.start_ticks = 77;
  p.host.container_id = "abc";
  p.host.container_runtime = "containerd";
  p.host.pod_uid = "0f1e2d3c";
  p.host.pod = "trainer-0";
  p.host.pod_namespace = "ml";
  p.host.container_name = "main";
  p.host.start_time = kT0 - seconds(30);
  p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(5.0 * (n + 1));
  d.processes.push_back(p);
  s.devices.push_back(d);
  return s;
}

class Recording : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("gw-rec-" + std::to_string(getpid()) + ".jsonl");
  }
  void TearDown() override { fs::remove(path_); }
  void Write(const std::string& text) { std::ofstream(path_) << text; }
  void WriteSamples(int n) {
    std::string text = JsonlHeader(Sample(0), "h") + "\n";
    for (int i = 0; i < n; ++i) text += JsonlSample(Sample(i)) + "\n";
    Write(text);
  }
  fs::path path_;
};

TEST_F(Recording, PlaysBackValuesReasonsAndProcesses) {
  WriteSamples(3);
  auto b = replay::ReplayBackend::Open({path_.string(), 0});
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ((*b)->DeviceCount(), 1);
  EXPECT_EQ((*b)->ReadHost()[FieldId::kDriverVersion].text(), "580.159.04");
  for (int i = 0; i < 3; ++i) {
    DeviceSample d;
    (*b)->ReadDevice(0, AllFields(), true, d);
    EXPECT_EQ(*(*b)->SampleTime(), kT0 + seconds(i));
    EXPECT_EQ(d.fields[FieldId::kName].text(), "NVIDIA H200") << "static facts from the header";
    EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].number(), 10.0 * (i + 1));
    EXPECT_EQ(d.fields[FieldId::kFanSpeedRatio].missing(), Missing::kNotSupported) << "never 0";
    ASSERT_EQ(d.processes.size(), 1u);
    EXPECT_EQ(d.processes[0].host.user, "ann");
    EXPECT_EQ(d.processes[0].host.start_ticks, 77u);
    // The whole identity the live view shows (the API's reader reads the same objects).
    const HostProcess& h = d.processes[0].host;
    EXPECT_EQ(h.container_id, "abc");
    EXPECT_EQ(h.container_runtime, "containerd");
    EXPECT_EQ(h.pod_uid, "0f1e2d3c");
    EXPECT_EQ(h.pod, "trainer-0");
    EXPECT_EQ(h.pod_namespace, "ml");
    EXPECT_EQ(h.container_name, "main");
    EXPECT_EQ(h.start_time, std::optional(kT0 - seconds(30)));
    EXPECT_EQ(d.processes[0].fields[FieldId::kProcessUsedMemoryBytes].number(), 5.0 * (i + 1));
    EXPECT_EQ((*b)->Finished(), i == 2);
  }
  DeviceSample last;
  (*b)->ReadDevice(0, AllFields(), true, last);
  EXPECT_EQ(last.fields[FieldId::kMemoryUsedBytes].number(), 30.0) << "stays on the last sample";
}

TEST_F(Recording, AGpuRecordedStaleReplaysStaleNotAsFreshValues) {
  Snapshot hung = Sample(1);
  hung.devices[0].health = DeviceHealth::kStale;
  hung.devices[0].health_detail = "reading GPU 0 has not returned for 5 s";
  Write(JsonlHeader(Sample(0), "h") + "\n" + JsonlSample(Sample(0)) + "\n" + JsonlSample(hung) +
        "\n");
  auto b = replay::ReplayBackend::Open({path_.string(), 0});
  ASSERT_TRUE(b) << b.error().message();
  DeviceSample d;
  (*b)->ReadDevice(0, AllFields(), true, d);
  EXPECT_EQ(d.health, DeviceHealth::kOk);
  (*b)->ReadDevice(0, AllFields(), true, d);
  EXPECT_EQ(d.health, DeviceHealth::kStale) << "the analysis skips it, as it did live";
}

TEST_F(Recording, EveryReadMovesToTheNextSampleWhateverTheSpeed) {
  WriteSamples(4);
  for (const double speed : {0.0, 0.001, 1.0, 1e6}) {
    auto b = replay::ReplayBackend::Open({path_.string(), speed});
    ASSERT_TRUE(b) << b.error().message();
    for (int i = 0; i < 4; ++i) {
      DeviceSample d;
      (*b)->ReadDevice(0, AllFields(), false, d);
      EXPECT_EQ(*(*b)->SampleTime(), kT0 + seconds(i)) << "speed " << speed;
      EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].number(), 10.0 * (i + 1)) << "speed " << speed;
      EXPECT_EQ((*b)->Finished(), i == 3) << "speed " << speed;
    }
  }
}

TEST_F(Recording, NextSampleIsDueOnTheRecordedClockDividedBySpeed) {
  using Steady = std::chrono::steady_clock;
  WriteSamples(3);  // one a second
  auto b = replay::ReplayBackend::Open({path_.string(), 4});
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ((*b)->NextSampleDue(), Steady::time_point::min()) << "the first sample at once";
  DeviceSample d;
  (*b)->ReadDevice(0, AllFields(), false, d);
  const auto second = (*b)->NextSampleDue();
  ASSERT_TRUE(second);
  (*b)->ReadDevice(0, AllFields(), false, d);
  const auto third = (*b)->NextSampleDue();
  ASSERT_TRUE(third);
  EXPECT_EQ(*third - *second, milliseconds(250)) << "1 s recorded at speed 4";
  (*b)->ReadDevice(0, AllFields(), false, d);
  EXPECT_TRUE((*b)->Finished());

  auto fast = replay::ReplayBackend::Open({path_.string(), 0});
  ASSERT_TRUE(fast);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*fast)->NextSampleDue(), Steady::time_point::min()) << "speed 0: every one at once";
    (*fast)->ReadDevice(0, AllFields(), false, d);
  }
}

TEST_F(Recording, RecordedHostnameIsReadFromTheHeaderAlone) {
  Event mark;  // a mark may come before the header
  mark.time = kT0;
  mark.kind = Event::Kind::kMark;
  mark.source = "phase";
  mark.message = "phase train";
  Write(JsonlEvent(mark) + "\n" + JsonlHeader(Sample(0), "node-7") + "\n" + JsonlSample(Sample(0)) +
        "\n");
  EXPECT_EQ(replay::RecordedHostname(path_.string()), "node-7");
  auto b = replay::ReplayBackend::Open({path_.string(), 0});
  ASSERT_TRUE(b);
  EXPECT_EQ((*b)->hostname(), "node-7") << "the same name the backend has";
  Write("not a recording\n");
  EXPECT_EQ(replay::RecordedHostname(path_.string()), "");
  EXPECT_EQ(replay::RecordedHostname("/nonexistent.jsonl"), "");
}

TEST_F(Recording, BadRecordingsAreErrorsNamingFileAndLine) {
  Write("{\"type\":\"header\",\"schema\":\"gpuwatch.jsonl/1\",\"devices\":[]}\nnot json\n");
  auto bad = replay::ReplayBackend::Open({path_.string(), 1});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find(path_.string() + ":2: not a JSON object"), std::string::npos)
      << bad.error().message();
  Write("{\"type\":\"header\",\"schema\":\"gpuwatch.jsonl/9\"}\n");
  EXPECT_NE(replay::ReplayBackend::Open({path_.string(), 1})
                .error()
                .message()
                .find("expected gpuwatch.jsonl/1"),
            std::string::npos);
  Write(JsonlSample(Sample(0)) + "\n");
  EXPECT_NE(
      replay::ReplayBackend::Open({path_.string(), 1}).error().message().find("before the header"),
      std::string::npos);
  Write(JsonlHeader(Sample(0), "h") + "\n");
  EXPECT_NE(replay::ReplayBackend::Open({path_.string(), 1}).error().message().find("no samples"),
            std::string::npos);
  EXPECT_EQ(replay::ReplayBackend::Open({"/nonexistent.jsonl", 1}).error().code(),
            Status::Code::kNotFound);
}

TEST_F(Recording, EventsMarksAndFrameworkLinesAreKeptInTimeOrder) {
  Event alert;
  alert.time = kT0 + milliseconds(1500);
  alert.kind = Event::Kind::kAlertFiring;
  alert.severity = Severity::kCritical;
  alert.source = "memory_high";
  alert.gpu = 0;
  alert.process = ProcessKey{42, 77};
  alert.value = 0.97;
  alert.message = "GPU-0 memory at 97%";
  Event step;  // as cli/pipeline.cc writes a mark
  step.time = kT0 + milliseconds(1200);
  step.kind = Event::Kind::kMark;
  step.source = "step";
  step.message = "step 120";
  step.value = 120;
  Event early = step;  // a mark can come before the first sample (and the header)
  early.time = kT0 - seconds(1);
  early.source = "phase";
  early.message = "phase train";
  early.value.reset();
  std::string text = JsonlEvent(early) + "\n" + JsonlHeader(Sample(0), "node-7") + "\n";
  text += JsonlSample(Sample(0)) + "\n" + JsonlEvent(alert) + "\n" + JsonlEvent(step) + "\n";
  text +=
      R"({"type":"framework","time":"2026-11-25T08:20:01.250Z","gpu":0,"framework":"torch","bytes":{"allocated":123,"reserved":456},"pid":4242})"
      "\n";
  text +=
      R"({"type":"framework","time":"2026-11-25T08:20:00.500Z","gpu":1,"framework":"jax","bytes":{}})"
      "\n";
  text += R"({"type":"tomorrow","whatever":[1,2]})"
          "\n";  // a newer writer's line type
  text +=
      R"({"type":"event","time":"2026-11-25T08:20:02.000Z","kind":"quantum_flux","message":"?"})"
      "\n";
  text += JsonlSample(Sample(1)) + "\n";
  Write(text);

  auto b = replay::ReplayBackend::Open({path_.string(), 0});
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ((*b)->format(), replay::ReplayBackend::Format::kJsonLines);
  EXPECT_EQ((*b)->hostname(), "node-7");
  EXPECT_EQ((*b)->samples(), 2u);

  const std::vector<Event>& e = (*b)->events();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].message, "phase train");
  EXPECT_EQ(e[0].kind, Event::Kind::kMark);
  EXPECT_FALSE(e[0].value);
  EXPECT_EQ(e[1].kind, Event::Kind::kMark);
  EXPECT_EQ(e[1].time, kT0 + milliseconds(1200));
  EXPECT_EQ(e[1].source, "step");
  EXPECT_EQ(e[1].message, "step 120");
  EXPECT_EQ(e[1].value, 120.0);
  EXPECT_EQ(e[2].kind, Event::Kind::kAlertFiring);
  EXPECT_EQ(e[2].severity, Severity::kCritical);
  EXPECT_EQ(e[2].source, "memory_high");
  EXPECT_EQ(e[2].gpu, 0);
  EXPECT_EQ(e[2].process->pid, 42u);
  EXPECT_EQ(e[2].value, 0.97);
  EXPECT_EQ(e[2].message, "GPU-0 memory at 97%");

  const auto& f = (*b)->framework();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].framework, "jax") << "in time order";
  EXPECT_EQ(f[0].gpu, 1);
  EXPECT_TRUE(f[0].bytes.empty());
  EXPECT_FALSE(f[0].pid) << "a line without a pid (older writers)";
  EXPECT_EQ(f[1].framework, "torch");
  EXPECT_EQ(f[1].pid, 4242u);
  EXPECT_EQ(f[1].time, std::chrono::system_clock::time_point(milliseconds(1795594801250)));
  EXPECT_EQ(f[1].bytes, (std::map<std::string, double>{{"allocated", 123}, {"reserved", 456}}));

  ASSERT_EQ((*b)->notes().size(), 1u);
  EXPECT_THAT((*b)->notes()[0], HasSubstr("1 event(s) of kinds this gpuwatch does not know "
                                          "(quantum_flux) skipped"));
}

TEST_F(Recording, MalformedEventOrFrameworkLineIsAnErrorNamingFileAndLine) {
  const std::string start = JsonlHeader(Sample(0), "h") + "\n" + JsonlSample(Sample(0)) + "\n";
  const std::pair<std::string, std::string> cases[] = {
      {R"({"type":"framework","time":"2026-11-25T08:20:01.250Z","framework":"torch","bytes":{}})",
       ":3: framework: no \"gpu\""},
      {R"({"type":"framework","time":"2026-11-25T08:20:01.250Z","gpu":0,"framework":"torch","bytes":{"allocated":"lots"}})",
       ":3: framework: \"bytes\": \"allocated\" is not a number"},
      {R"({"type":"framework","time":"2026-11-25T08:20:01.250Z","gpu":0,"framework":"torch"})",
       ":3: framework: \"bytes\" is not an object"},
      {R"({"type":"framework","time":"yesterday","gpu":0,"framework":"torch","bytes":{}})",
       ":3: framework: bad \"time\""},
      {R"({"type":"framework","time":"2026-11-25T08:20:01.250Z","gpu":"0","framework":"torch","bytes":{}})",
       ":3: framework: bad \"gpu\""},
      {R"({"type":"framework","time":"2026-11-25T08:20:01.250Z","gpu":0,"framework":"torch","bytes":{},"pid":-1})",
       ":3: framework: bad \"pid\""},
      {R"({"type":"event","kind":"mark","message":"step 1"})", ":3: event: bad \"time\""},
      {R"({"type":"event","time":"2026-11-25T08:20:01.250Z","message":"step 1"})",
       ":3: event: no \"kind\""},
      {R"({"type":"event","time":"2026-11-25T08:20:01.250Z","kind":"mark","value":"one"})",
       ":3: event: bad \"value\""},
      {R"({"type":"event","time":"2026-11-25T08:20:01.250Z","kind":"mark","severity":"dire"})",
       ":3: event: bad \"severity\""},
      {R"({"type":"event","time":"2026-11-25T08:20:01.250Z","kind":"mark","pid":-1})",
       ":3: event: bad \"pid\""},
  };
  for (const auto& [line, want] : cases) {
    Write(start + line + "\n");
    auto b = replay::ReplayBackend::Open({path_.string(), 0});
    ASSERT_FALSE(b) << line;
    EXPECT_THAT(b.error().message(), HasSubstr(path_.string() + want)) << line;
    EXPECT_EQ(b.error().code(), Status::Code::kInvalidArgument);
  }
}

std::vector<std::string> LinesOf(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t Columns(const std::string& row) {
  return static_cast<std::size_t>(std::count(row.begin(), row.end(), ',')) + 1;
}

std::string ErrorOf(const fs::path& p) {
  auto b = replay::ReplayBackend::Open({p.string(), 0});
  return b ? "no error" : b.error().message();
}

// Writes `lines(i)` for i in 0..9 to `path` through a LineFile, samples 5-7
// with the disk full 40 bytes on: the first of them is cut mid-line.
// Returns the warnings.
int RecordWithAFullDisk(const fs::path& path,
                        const std::function<std::vector<std::string>(int)>& lines) {
  int warnings = 0;
  auto f = LineFile::Open(path.string(), [&](const std::string&) { ++warnings; });
  EXPECT_TRUE(f) << f.error().message();
  if (!f) return -1;
  const auto write = [&](int i) {
    for (auto& line : lines(i)) (*f)->Write(std::move(line));
    (*f)->Flush();
  };
  for (int i = 0; i < 5; ++i) write(i);
  {
    testing::FileSizeLimit full(fs::file_size(path) + 40);
    EXPECT_TRUE(full.ok());
    for (int i = 5; i < 8; ++i) write(i);
  }
  for (int i = 8; i < 10; ++i) write(i);
  (*f)->Close();
  return warnings;
}

// Fault 17: a disk that fills up mid-line. Records written short are cut
// off again, so every line is whole: the file replays, the CSV keeps its
// columns.
TEST_F(Recording, ADiskFullMidLineLeavesOnlyWholeRecordsThatReplay) {
  EXPECT_EQ(RecordWithAFullDisk(path_,
                                [](int i) {
                                  std::vector<std::string> out;
                                  if (i == 0) out.push_back(JsonlHeader(Sample(0), "h"));
                                  out.push_back(JsonlSample(Sample(i)));
                                  return out;
                                }),
            1);
  const std::vector<std::string> lines = LinesOf(path_);
  ASSERT_EQ(lines.size(), 1u + 7u) << "the header, samples 0-4 and 8-9";
  for (const auto& line : lines) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << "not a whole record: " << line;
  }
  auto b = replay::ReplayBackend::Open({path_.string(), 0});
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ((*b)->samples(), 7u);
  EXPECT_TRUE((*b)->notes().empty()) << (*b)->notes()[0];
  std::vector<std::chrono::system_clock::time_point> times;
  for (std::size_t i = 0; i < 7; ++i) {
    DeviceSample d;
    (*b)->ReadDevice(0, AllFields(), false, d);
    times.push_back(*(*b)->SampleTime());
  }
  EXPECT_EQ(times[4], kT0 + seconds(4));
  EXPECT_EQ(times[5], kT0 + seconds(8)) << "nothing of 5-7, all of what came after";
  EXPECT_EQ(times[6], kT0 + seconds(9));

  const fs::path csv = path_.string() + ".csv";
  fs::remove(csv);
  EXPECT_EQ(RecordWithAFullDisk(csv,
                                [](int i) {
                                  std::vector<std::string> out = CsvRows(Sample(i));
                                  if (i == 0) out.insert(out.begin(), CsvHeader());
                                  return out;
                                }),
            1);
  const std::vector<std::string> table = LinesOf(csv);
  ASSERT_EQ(table.size(), 1u + 7u) << "the header, rows 0-4 and 8-9";
  for (const auto& row : table) EXPECT_EQ(Columns(row), CsvColumns().size()) << row;
  EXPECT_EQ(table.back(), CsvRows(Sample(9))[0]);
  fs::remove(csv);
}

TEST_F(Recording, ABadLastLineIsSkippedWithANoteNamingFileAndLine) {
  const std::string start = JsonlHeader(Sample(0), "h") + "\n" + JsonlSample(Sample(0)) + "\n" +
                            JsonlSample(Sample(1)) + "\n";
  const std::string cut = JsonlSample(Sample(2)).substr(0, 57);
  for (const std::string& last : {cut, cut + "\n", std::string(300, '\0') + "\n"}) {
    Write(start + last);
    auto b = replay::ReplayBackend::Open({path_.string(), 0});
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ((*b)->samples(), 2u);
    ASSERT_EQ((*b)->notes().size(), 1u);
    EXPECT_THAT((*b)->notes()[0],
                HasSubstr(path_.string() + ":4: the last line is not a whole JSON object"));
  }
  // In the middle, a line that is not JSON is still an error naming it.
  Write(start + "not json\n" + JsonlSample(Sample(2)) + "\n");
  EXPECT_THAT(ErrorOf(path_), HasSubstr(path_.string() + ":4: not a JSON object"));
}

// What a recorder leaves when it could not cut a short write off again: the
// piece on a line of its own (LineFile starts the next write on a new line).
TEST_F(Recording, ALineCutShortInTheMiddleIsSkippedWithANote) {
  Write(JsonlHeader(Sample(0), "h") + "\n" + JsonlSample(Sample(0)) + "\n" +
        JsonlSample(Sample(1)).substr(0, 80) + "\n" + JsonlSample(Sample(2)) + "\n" +
        JsonlSample(Sample(3)).substr(0, 20) + "\n" + JsonlSample(Sample(4)) + "\n");
  auto b = replay::ReplayBackend::Open({path_.string(), 0});
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ((*b)->samples(), 3u);
  ASSERT_EQ((*b)->notes().size(), 1u);
  EXPECT_THAT((*b)->notes()[0], HasSubstr(path_.string() + ": 2 lines cut short"));
  EXPECT_THAT((*b)->notes()[0], HasSubstr("lines 3, 5"));
}

TEST_F(Recording, WrongTypesAreErrorsNamingFileLineAndField) {
  const std::string header = JsonlHeader(Sample(0), "h");
  const std::string sample = JsonlSample(Sample(0));
  const auto edit = [](const std::string& line, const std::function<void(nlohmann::json&)>& f) {
    nlohmann::json j = nlohmann::json::parse(line);
    f(j);
    return j.dump();
  };
  using J = nlohmann::json;
  const std::pair<std::string, std::string> cases[] = {
      {edit(sample, [](J& j) { j["devices"][0]["index"] = "0"; }),
       ":2: field devices[0].index: expected a whole number from 0 to 63, got \"0\""},
      {edit(sample, [](J& j) { j["devices"][0]["fields"]["memory_used_bytes"] = "lots"; }),
       ":2: field devices[0].fields.memory_used_bytes: expected a number, got \"lots\""},
      {edit(sample, [](J& j) { j["devices"][0]["processes"][0]["pid"] = "42"; }),
       ":2: field devices[0].processes[0].pid: expected a whole number of at least 0"},
      {edit(sample, [](J& j) { j["devices"][0]["processes"][0]["start_ticks"] = -1; }),
       ":2: field devices[0].processes[0].start_ticks: expected a whole number of at least 0, "
       "got -1"},
      {edit(sample, [](J& j) { j["devices"][0]["processes"][0]["user"] = 1000; }),
       ":2: field devices[0].processes[0].user: expected text, got 1000"},
      {edit(sample, [](J& j) { j["devices"][0]["processes"] = J::object(); }),
       ":2: field devices[0].processes: expected an array, got an object"},
      {edit(sample, [](J& j) { j["devices"][0]["health"] = false; }),
       ":2: field devices[0].health: expected text, got false"},
      {edit(sample,
            [](J& j) {
              j["devices"][0]["unavailable"]["fan_speed_ratio"] = {{"reason", 3}};
            }),
       ":2: field devices[0].unavailable.fan_speed_ratio.reason: expected text, got 3"},
      {edit(sample, [](J& j) { j["devices"] = J::array({"GPU-0"}); }),
       ":2: field devices[0]: expected an object, got \"GPU-0\""},
      {edit(sample, [](J& j) { j["type"] = 5; }), ":2: field type: expected text, got 5"},
      {edit(sample, [](J& j) { j["devices"][0]["index"] = 100000; }),
       ":2: field devices[0].index: expected a whole number from 0 to 63, got 100000"},
  };
  for (const auto& [line, want] : cases) {
    Write(header + "\n" + line + "\n" + sample + "\n");
    EXPECT_THAT(ErrorOf(path_), HasSubstr(path_.string() + want)) << line;
  }
  const std::pair<std::string, std::string> headers[] = {
      {edit(header, [](J& j) { j["hostname"] = 7; }), ":1: field hostname: expected text, got 7"},
      {edit(header, [](J& j) { j["demo"] = "yes"; }),
       ":1: field demo: expected true or false, got \"yes\""},
      {edit(header, [](J& j) { j["devices"] = 1; }), ":1: field devices: expected an array, got 1"},
      {edit(header, [](J& j) { j["devices"][0]["fields"]["name"] = 200; }),
       ":1: field devices[0].fields.name: expected text, got 200"},
      {edit(header, [](J& j) { j["host"]["driver_version"] = J::array(); }),
       ":1: field host.driver_version: expected text, got an array"},
      {edit(header, [](J& j) { j["schema"] = 1; }), ":1: field schema: expected text, got 1"},
  };
  for (const auto& [line, want] : headers) {
    Write(line + "\n" + sample + "\n");
    EXPECT_THAT(ErrorOf(path_), HasSubstr(path_.string() + want)) << line;
  }
}

TEST_F(Recording, HostileSizesAndFilesAreRefusedNamingThem) {
  const std::string sample = JsonlSample(Sample(0));
  nlohmann::json many = nlohmann::json::parse(JsonlHeader(Sample(0), "h"));
  many["devices"] = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i) many["devices"].push_back({{"index", i}});
  Write(many.dump() + "\n" + sample + "\n");
  EXPECT_THAT(ErrorOf(path_),
              HasSubstr(path_.string() + ":1: 100000 GPUs, more than the 64 a recording may hold"));

  // A file without newlines: one line, refused at 16 MiB, not read whole.
  {
    std::ofstream out(path_, std::ios::binary);
    out << JsonlHeader(Sample(0), "h") << "\n" << sample << "\n";
    const std::string block(1 << 20, 'x');
    for (int i = 0; i < 17; ++i) out << block;
  }
  EXPECT_THAT(ErrorOf(path_), HasSubstr(path_.string() + ":3: a line longer than 16 MiB"));

  // Not regular files: refused at once, never read or waited on.
  EXPECT_THAT(ErrorOf("/dev/zero"), HasSubstr("/dev/zero is a character device"));
  EXPECT_EQ(replay::RecordedHostname("/dev/zero"), "");
  const fs::path fifo = path_.string() + ".fifo";
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ErrorOf(fifo), HasSubstr(fifo.string() + " is a FIFO"));
  EXPECT_EQ(replay::RecordedHostname(fifo.string()), "");
  EXPECT_THAT(replay::ReadJsonlRecording(fifo.string()).error().message(), HasSubstr("a FIFO"));
  EXPECT_THAT(replay::ReadHistoryRecording(fifo.string()).error().message(), HasSubstr("a FIFO"));
  fs::remove(fifo);
}

}  // namespace
}  // namespace gpuwatch
