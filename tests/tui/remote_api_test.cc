// `top --remote`, the pure parts: the API's documents read back. The demo
// fleet's snapshot with every kind of reading, alerts, leaks, framework
// memory, pre-allocation and leases through SnapshotDocument and
// ParseSnapshotDocument gives what went in; documents that are not the API
// are named as such. Addresses: remote_endpoint_test.cc; the HTTP side
// against real daemons: remote_api_daemon_test.cc.
#include "tui/remote_api.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/source.h"
#include "export/api_documents.h"
#include "sampler/collect.h"

namespace gpuwatch::tui {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// The demo fleet's first sample, with what the fleet lacks added by hand:
// text, absent readings with and without detail, a stale GPU, a process
// with every host identity field. Times to the microsecond (what a double
// of Unix seconds keeps), process start times to the millisecond (RFC 3339).
std::shared_ptr<Snapshot> FullSnapshot() {
  engine::SourceOptions o;
  o.demo = true;
  o.demo_dir = GPUWATCH_BINARY_DIR;
  auto source = engine::OpenSource(o);
  EXPECT_TRUE(source) << source.error().message();
  if (!source) return nullptr;
  auto s = std::make_shared<Snapshot>(
      CollectOnce(*source->backend, source->resolver.get(), CollectOptions{}));
  s->time = std::chrono::floor<std::chrono::microseconds>(s->time) + 123us;
  s->sequence = 42;
  s->stale = true;
  s->sample_duration = 1234us;
  s->source = "nvml:/fake/libnvidia-ml.so.1";
  EXPECT_GE(s->devices.size(), 3u);
  EXPECT_FALSE(s->mig_devices.empty()) << "the demo's GPU 5 is in MIG mode";
  DeviceSample& d0 = s->devices[0];
  d0.fields[FieldId::kFanSpeedRatio] =
      Reading::Absent(Missing::kNotSupported, "nvmlDeviceGetFanSpeed: Not Supported");
  d0.fields[FieldId::kPowerDrawWatts] = Reading::Absent(Missing::kNoPermission);
  d0.fields[FieldId::kMemoryUsedRatio] = Reading::Absent(Missing::kImplausible, "used > total");
  d0.fields[FieldId::kUtilizationGpuRatio] = Reading::Number(0.3125);
  d0.fields[FieldId::kVbiosVersion] = Reading::Text("96.00.99.00.01");
  s->devices[1].health = DeviceHealth::kStale;
  s->devices[1].health_detail = "nvmlDeviceGetPowerUsage has not returned for 5 s";
  s->devices[2].health = DeviceHealth::kLost;
  s->devices[2].health_detail = "GPU is lost";
  ProcessSample p;
  p.pid = 777;
  p.type = ProcessSample::Type::kComputeAndGraphics;
  p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(3.5 * (1 << 30));
  p.fields[FieldId::kProcessCpuRatio] = Reading::Number(1.62);
  p.fields[FieldId::kProcessSmUtilizationRatio] = Reading::Absent(Missing::kNotSupported, "why");
  p.host = {HostProcess::Visibility::kOtherPidNs,
            "python",
            "python train.py --x \"y\"",
            "alice",
            1000,
            0,  // start ticks: not in the API
            std::chrono::system_clock::time_point(1796033018287ms),
            "e8e4c437cd61aa",
            "docker",
            "pod-1234",
            "train-1",
            "team-a",
            "trainer",
            "99"};
  d0.processes.push_back(p);
  for (auto* devices : {&s->devices, &s->mig_devices}) {
    for (DeviceSample& d : *devices) {
      for (ProcessSample& q : d.processes) {
        q.host.start_ticks = 0;
        if (q.host.start_time)
          q.host.start_time = std::chrono::floor<std::chrono::milliseconds>(*q.host.start_time);
      }
    }
  }
  return s;
}

std::string Uuid(const DeviceSample& d) { return d.fields[FieldId::kUuid].text(); }

struct RoundTrip {
  Published published;
  host::LeaseTable leases;
  HostState state;
};

RoundTrip MakeRoundTrip() {
  RoundTrip r;
  Published& p = r.published;
  p.snapshot = FullSnapshot();
  const auto t0 = p.snapshot->time;
  p.alerts = {
      {"hot", Severity::kCritical, 3, ProcessKey{41001, 0}, t0 - 10s, 91.5, "GPU 3 is at 91.5 C"},
      {"idle", Severity::kWarning, 0, std::nullopt, t0 - 1500ms, std::nullopt, "GPU 0 idle"}};
  leaks::LeakReport process_leak;
  process_leak.subject = {1, ProcessKey{41001, 0}, ""};
  process_leak.estimate.suspected = true;
  process_leak.estimate.rate_bytes_per_s = 1048576.5;
  process_leak.estimate.confidence = 0.999;
  process_leak.time_to_full = 3600s;
  process_leak.bytes_per_step = 4096;
  leaks::LeakReport forecast;
  forecast.subject = {0, std::nullopt, ""};
  forecast.estimate.forecast = true;
  forecast.estimate.rate_bytes_per_s = 2e6;
  forecast.estimate.confidence = 0.95;
  forecast.time_to_full = 120s;
  leaks::LeakReport framework_leak;
  framework_leak.subject = {3, ProcessKey{41003, 0}, "torch"};
  framework_leak.estimate.suspected = true;
  framework_leak.estimate.rate_bytes_per_s = 512;
  leaks::LeakReport quiet;  // neither a verdict nor a forecast: not in the document
  quiet.subject = {4, std::nullopt, ""};
  p.leaks = {process_leak, forecast, quiet, framework_leak};
  p.framework = {{0, 41001, "torch", {{"allocated", 1e9}, {"reserved", 2e9}, {"active", 5e8}}, t0},
                 {0, 41002, "jax", {{"allocated", 3e9}}, t0 - 2s}};
  p.preallocated = {{3, ProcessKey{41003, 0}, 7.5e10, 0.94}};
  const DeviceSample& mig = p.snapshot->mig_devices.front();
  r.leases.leases = {{Uuid(p.snapshot->devices[2]),
                      "2",
                      {{1234, 55}, {1240, 60}},
                      "bob",
                      "sleep 900",
                      4,
                      std::chrono::system_clock::time_point(1796033000123ms)},
                     {Uuid(mig),
                      fmt::format("{}:{}", mig.index, *mig.mig_index),
                      {{1300, 70}},
                      "erin",
                      "python mig.py",
                      5,
                      std::chrono::system_clock::time_point(1796033001000ms)}};
  r.leases.queue = {{6, ProcessKey{1400, 0}, "carol", "python train.py", 2, "2 GPUs",
                     std::chrono::system_clock::time_point(1796033002456ms)}};
  const LeaseRead read = r.leases;
  const json doc = SnapshotDocument(p, ApiContext{"gpu-node-7", 1.0}, &read);
  auto state = ParseSnapshotDocument(json::parse(doc.dump()), "host1:9835");  // as sent
  EXPECT_TRUE(state) << state.error().message();
  if (state) r.state = std::move(*state);
  return r;
}

template <Scope S>
void ExpectFields(const FieldArray<S>& got, const FieldArray<S>& want, const std::string& at) {
  const FieldRange range = RangeOf(S);
  for (std::size_t i = range.first; i < range.first + range.count; ++i) {
    const auto id = static_cast<FieldId>(i);
    const Reading &g = got[id], &w = want[id];
    EXPECT_EQ(g.ok(), w.ok()) << at << " " << Info(id).key;
    EXPECT_TRUE(g == w) << at << " " << Info(id).key << ": got "
                        << (g.is_number() ? std::to_string(g.number())
                            : g.is_text()
                                ? g.text()
                                : std::string(MissingName(g.missing())) + " " + g.detail())
                        << ", want "
                        << (w.is_number() ? std::to_string(w.number())
                            : w.is_text()
                                ? w.text()
                                : std::string(MissingName(w.missing())) + " " + w.detail());
  }
}

void ExpectDevices(const std::vector<DeviceSample>& got, const std::vector<DeviceSample>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::string at = fmt::format("device {}", i);
    EXPECT_EQ(got[i].index, want[i].index) << at;
    EXPECT_EQ(got[i].mig_index, want[i].mig_index) << at;
    EXPECT_EQ(got[i].gpu_instance_id, want[i].gpu_instance_id) << at;
    EXPECT_EQ(got[i].compute_instance_id, want[i].compute_instance_id) << at;
    EXPECT_EQ(got[i].health, want[i].health) << at;
    EXPECT_EQ(got[i].health_detail, want[i].health_detail) << at;
    ExpectFields(got[i].fields, want[i].fields, at);
    ASSERT_EQ(got[i].processes.size(), want[i].processes.size()) << at;
    for (std::size_t k = 0; k < got[i].processes.size(); ++k) {
      ExpectFields(got[i].processes[k].fields, want[i].processes[k].fields,
                   fmt::format("{} process {}", at, want[i].processes[k].pid));
      EXPECT_TRUE(got[i].processes[k] == want[i].processes[k])
          << at << " process " << want[i].processes[k].pid;
    }
    EXPECT_TRUE(got[i] == want[i]) << at;
  }
}

TEST(ParseSnapshotDocument, GivesBackTheSnapshotItWasMadeFrom) {
  const RoundTrip r = MakeRoundTrip();
  ASSERT_TRUE(r.state.snapshot);
  const Snapshot &got = *r.state.snapshot, &want = *r.published.snapshot;
  EXPECT_EQ(r.state.label, "host1:9835");
  EXPECT_EQ(r.state.hostname, "gpu-node-7");
  EXPECT_EQ(got.time, want.time);
  EXPECT_EQ(got.sequence, 42u);
  EXPECT_TRUE(got.stale);
  EXPECT_TRUE(got.demo);
  EXPECT_EQ(got.source, want.source);
  EXPECT_EQ(got.sample_duration, 1234us);
  ExpectFields(got.host, want.host, "host");
  ExpectDevices(got.devices, want.devices);
  ExpectDevices(got.mig_devices, want.mig_devices);
  bool container_seen = false;
  for (const auto& d : got.devices) {
    for (const auto& p : d.processes) container_seen |= !p.host.container_id.empty();
  }
  EXPECT_TRUE(container_seen);
  EXPECT_TRUE(r.state.down.empty());
}

TEST(ParseSnapshotDocument, GivesBackAlertsLeaksFrameworkAndPreallocation) {
  const RoundTrip r = MakeRoundTrip();
  const Published& p = r.published;
  ASSERT_EQ(r.state.alerts.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto &got = r.state.alerts[i], &want = p.alerts[i];
    EXPECT_EQ(got.rule, want.rule);
    EXPECT_EQ(got.severity, want.severity);
    EXPECT_EQ(got.gpu, want.gpu);
    EXPECT_EQ(got.process, want.process);
    EXPECT_EQ(got.value, want.value);
    EXPECT_EQ(got.message, want.message);
    EXPECT_EQ(got.since, want.since);
  }
  ASSERT_EQ(r.state.leaks.size(), 3u) << "standing verdicts and forecasts only";
  const leaks::LeakReport* want_leaks[] = {&p.leaks[0], &p.leaks[1], &p.leaks[3]};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto &got = r.state.leaks[i], &want = *want_leaks[i];
    EXPECT_EQ(got.subject, want.subject) << i;
    EXPECT_EQ(got.estimate.suspected, want.estimate.suspected) << i;
    EXPECT_EQ(got.estimate.forecast, want.estimate.forecast) << i;
    EXPECT_EQ(got.estimate.rate_bytes_per_s, want.estimate.rate_bytes_per_s) << i;
    EXPECT_EQ(got.estimate.confidence, want.estimate.confidence) << i;
    EXPECT_EQ(got.time_to_full, want.time_to_full) << i;
    EXPECT_EQ(got.bytes_per_step, want.bytes_per_step) << i;
    EXPECT_EQ(got.capacity_bytes, p.snapshot->devices[static_cast<std::size_t>(want.subject.gpu)]
                                      .fields[FieldId::kMemoryTotalBytes]
                                      .number())
        << i;
  }
  ASSERT_EQ(r.state.framework.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto &got = r.state.framework[i], &want = p.framework[i];
    EXPECT_EQ(got.gpu, want.gpu);
    EXPECT_EQ(got.pid, want.pid);
    EXPECT_EQ(got.framework, want.framework);
    EXPECT_EQ(got.bytes, want.bytes) << "reserved: null in the document, absent here";
    EXPECT_EQ(got.time, want.time);
  }
  ASSERT_EQ(r.state.preallocated.size(), 1u);
  EXPECT_EQ(r.state.preallocated[0].gpu, 3);
  EXPECT_EQ(r.state.preallocated[0].process.pid, 41003u);
  EXPECT_EQ(r.state.preallocated[0].bytes, 7.5e10);
  EXPECT_EQ(r.state.preallocated[0].share, 0.94);
}

TEST(ParseSnapshotDocument, GivesBackLeasesAndTheQueue) {
  const RoundTrip r = MakeRoundTrip();
  ASSERT_TRUE(r.state.leases);
  const host::LeaseTable& got = *r.state.leases;
  ASSERT_EQ(got.leases.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const host::Lease &g = got.leases[i], &w = r.leases.leases[i];
    EXPECT_EQ(g.uuid, w.uuid);
    EXPECT_EQ(g.device, w.device);
    EXPECT_EQ(g.holders, w.holders);
    EXPECT_EQ(g.user, w.user);
    EXPECT_EQ(g.command, w.command);
    EXPECT_EQ(g.ticket, w.ticket);
    EXPECT_EQ(g.since, w.since);
  }
  EXPECT_NE(got.Find(r.leases.leases[1].uuid), nullptr) << "a MIG device's lease";
  ASSERT_EQ(got.queue.size(), 1u);
  const host::Waiter &g = got.queue[0], &w = r.leases.queue[0];
  EXPECT_EQ(g.ticket, w.ticket);
  EXPECT_EQ(g.holder.pid, w.holder.pid);
  EXPECT_EQ(g.user, w.user);
  EXPECT_EQ(g.command, w.command);
  EXPECT_EQ(g.count, w.count);
  EXPECT_EQ(g.wants, w.wants);
  EXPECT_EQ(g.since, w.since);
  EXPECT_EQ(got.next_ticket, 7u);
}

TEST(ParseSnapshotDocument, LeasesAreUnknownWithoutLeaseKeysOrWhenTheFileFailed) {
  Published p;
  p.snapshot = std::make_shared<Snapshot>();
  auto none = ParseSnapshotDocument(SnapshotDocument(p, {}), "h");
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_FALSE(none->leases);
  const LeaseRead failed = Status::Unavailable("leases.json: bad");
  auto unknown = ParseSnapshotDocument(SnapshotDocument(p, {}, &failed), "h");
  ASSERT_TRUE(unknown) << unknown.error().message();
  EXPECT_FALSE(unknown->leases);
  const LeaseRead empty = host::LeaseTable{};
  auto free = ParseSnapshotDocument(SnapshotDocument(p, {}, &empty), "h");
  ASSERT_TRUE(free) << free.error().message();
  ASSERT_TRUE(free->leases);
  EXPECT_TRUE(free->leases->leases.empty());
}

TEST(ParseSnapshotDocument, ADaemonWithoutASampleGivesNoSnapshot) {
  auto s = ParseSnapshotDocument(SnapshotDocument(Published{}, {"vm", 1}), "h");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_FALSE(s->snapshot);
  EXPECT_EQ(s->hostname, "vm");
}

TEST(ParseSnapshotDocument, SkipsFieldsANewerDaemonAdds) {
  Published p;
  p.snapshot = FullSnapshot();
  json doc = SnapshotDocument(p, {});
  doc["devices"][0]["fields"]["quantum_flux_ratio"] = 0.5;
  doc["devices"][0]["unavailable"]["quantum_flux_ratio"] = {{"reason", "not_supported"}};
  doc["devices"][0]["fields"]["process_cpu_ratio"] = 0.5;  // a process field on a device: skipped
  auto s = ParseSnapshotDocument(doc, "h");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->snapshot->devices[0].fields[FieldId::kUtilizationGpuRatio].number(), 0.3125);
}

TEST(ParseSnapshotDocument, SaysWhatIsNotTheApi) {
  Published p;
  p.snapshot = FullSnapshot();
  const json good = SnapshotDocument(p, {});
  auto with = [&](const std::function<void(json&)>& change) {
    json doc = good;
    change(doc);
    auto s = ParseSnapshotDocument(doc, "host1:9835");
    return s ? "" : s.error().message();
  };
  const std::string kNot = "host1:9835: not a gpuwatch API: ";
  auto message = [](const json& doc, const std::string& where) {
    auto s = ParseSnapshotDocument(doc, where);
    return s ? "" : s.error().message();
  };
  EXPECT_EQ(message(json{{"hello", 1}}, "host1:9835"), kNot + "no \"schema\"");
  EXPECT_EQ(message(json::array({1}), "host1:9835"), kNot + "the answer is array");
  EXPECT_EQ(message(json{{"hello", 1}}, ""), "not a gpuwatch API: no \"schema\"");
  EXPECT_EQ(with([](json& d) { d["schema"] = "gpuwatch.api/2"; }),
            kNot + "schema \"gpuwatch.api/2\", this version reads gpuwatch.api/1");
  EXPECT_EQ(with([](json& d) { d["schema"] = "gpuwatch.snapshot/1"; }),
            kNot + "schema \"gpuwatch.snapshot/1\", this version reads gpuwatch.api/1");
  EXPECT_EQ(with([](json& d) { d.erase("devices"); }), kNot + "no \"devices\" list");
  EXPECT_EQ(with([](json& d) { d["devices"][0]["index"] = "0"; }),
            kNot + "devices[0].index: expected a whole number from 0 to 1023, got \"0\"");
  EXPECT_EQ(with([](json& d) { d["devices"][1]["fields"]["memory_used_bytes"] = "lots"; }),
            kNot + "devices[1].fields.memory_used_bytes: expected a number, got \"lots\"");
  EXPECT_EQ(with([](json& d) { d["devices"][0]["fields"]["name"] = 5; }),
            kNot + "devices[0].fields.name: expected text, got 5");
  EXPECT_EQ(
      with([](json& d) { d["devices"][0]["unavailable"]["fan_speed_ratio"] = 1; }),
      kNot +
          "devices[0].unavailable.fan_speed_ratio: expected a reason (text or an object), got 1");
  EXPECT_EQ(with([](json& d) { d["devices"][0]["processes"][0]["start_time"] = "yesterday"; }),
            kNot +
                "devices[0].processes[0].start_time: expected an RFC 3339 time "
                "(2026-11-30T10:03:38.287Z), got \"yesterday\"");
  EXPECT_EQ(with([](json& d) { d["time"] = "now"; }),
            kNot + "time: expected a time in Unix seconds (1970 to 2200), got \"now\"");
  EXPECT_EQ(with([](json& d) {
              d["alerts"] = {{{"rule", 1}}};
            }),
            kNot + "alerts[0].rule: expected text, got 1");
  EXPECT_EQ(with([](json& d) { d["stale"] = "no"; }),
            kNot + "stale: expected true or false, got \"no\"");
}

TEST(ParseEventsDocument, GivesBackTheEventsItWasMadeFrom) {
  const auto t = std::chrono::system_clock::time_point(1796033018287654us);
  std::vector<Event> events(3);
  events[0] = {t,
               Event::Kind::kAlertFiring,
               Severity::kCritical,
               "hot",
               3,
               ProcessKey{41001, 0},
               91.5,
               std::nullopt,
               "GPU 3 hot"};
  events[1] = {t + 1s, Event::Kind::kOomForecast, Severity::kWarning, "leak", 0, std::nullopt, 2e6,
               120s,   "GPU 0 fills in 2 min"};
  events[2] = {t + 2s,       Event::Kind::kMark, Severity::kInfo, "job",     std::nullopt,
               std::nullopt, std::nullopt,       std::nullopt,    "step 100"};
  json doc = EventsDocument(events);
  doc["events"].push_back({{"time", 1796033020.0}, {"kind", "quantum_event"}});
  auto got = ParseEventsDocument(json::parse(doc.dump()), "h");
  ASSERT_TRUE(got) << got.error().message();
  ASSERT_EQ(got->size(), 3u) << "a kind this version does not know is left out";
  for (std::size_t i = 0; i < 3; ++i) {
    const Event &g = (*got)[i], &w = events[i];
    EXPECT_EQ(g.time, w.time) << i;
    EXPECT_EQ(g.kind, w.kind) << i;
    EXPECT_EQ(g.severity, w.severity) << i;
    EXPECT_EQ(g.source, w.source) << i;
    EXPECT_EQ(g.gpu, w.gpu) << i;
    EXPECT_EQ(g.process, w.process) << i;
    EXPECT_EQ(g.value, w.value) << i;
    EXPECT_EQ(g.time_to_full, w.time_to_full) << i;
    EXPECT_EQ(g.message, w.message) << i;
  }
  doc["events"][0]["gpu"] = "three";
  auto bad = ParseEventsDocument(doc, "h");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(),
            "h: not a gpuwatch API: events[0].gpu: expected a whole number from 0 to 1023, got "
            "\"three\"");
  EXPECT_FALSE(ParseEventsDocument(json{{"schema", "gpuwatch.api/1"}}, "h"));
}

}  // namespace
}  // namespace gpuwatch::tui
