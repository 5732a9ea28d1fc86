// ReplayBackend on recordings written by the JSON Lines serializer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/replay/replay_backend.h"
#include "export/lines.h"
#include "recording_fixture.h"

namespace gpuwatch {
namespace {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using namespace recording_test;

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
