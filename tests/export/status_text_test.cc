#include "export/status_text.h"

#include <gtest/gtest.h>

#include "export/snapshot_json.h"
#include "export/snapshot_leases.h"

namespace gpuwatch {
namespace {

TEST(StatusText, DescribesThrottleReasonsButNotIdle) {
  EXPECT_EQ(DescribeClockEventReasons(0x1), "");
  EXPECT_EQ(DescribeClockEventReasons(0x60), "sw thermal slowdown, hw thermal slowdown");
  EXPECT_EQ(DescribeClockEventReasons(0x4), "sw power cap");
}

TEST(StatusText, HumanBytes) {
  EXPECT_EQ(HumanBytes(512.0 * 1024 * 1024), "512 MiB");
  EXPECT_EQ(HumanBytes(92.5 * 1024 * 1024 * 1024), "92.5 GiB");
}

Snapshot OneGpu() {
  Snapshot s;
  DeviceSample d;
  d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(1024.0 * 1024 * 1024);
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(4 * 1024.0 * 1024 * 1024);
  d.fields[FieldId::kFanSpeedRatio] =
      Reading::Absent(Missing::kNotSupported, "nvmlDeviceGetFanSpeed: Not Supported");
  d.fields[FieldId::kTemperatureGpuCelsius] = Reading::Number(85);
  ProcessSample p;
  p.pid = 77;
  p.host.visibility = HostProcess::Visibility::kOtherPidNs;
  d.processes.push_back(p);
  s.devices.push_back(d);
  return s;
}

TEST(StatusText, ShowsNotApplicableNeverZeroAndHiddenPids) {
  const std::string text = RenderStatus(OneGpu(), {});
  EXPECT_NE(text.find("util N/A"), std::string::npos) << text;
  EXPECT_NE(text.find("host pid 77, not visible here"), std::string::npos) << text;
  EXPECT_NE(text.find("1.0 GiB / 4.0 GiB used (25.0%)"), std::string::npos) << text;
  EXPECT_EQ(text.find("\033["), std::string::npos) << "plain when not a terminal";
}

TEST(StatusText, ColoursHotGpuOnATerminal) {
  StatusTextOptions o;
  o.color = true;
  const std::string text = RenderStatus(OneGpu(), o);
  EXPECT_NE(text.find("\033[31m85°C"), std::string::npos) << text;
}

TEST(StatusText, DemoIsLabelled) {
  Snapshot s = OneGpu();
  s.demo = true;
  EXPECT_EQ(RenderStatus(s, {}).rfind("DEMO", 0), 0u);
}

using std::chrono::seconds;
using std::chrono::system_clock;

const system_clock::time_point kNow = system_clock::time_point(seconds(1796033018));

host::Lease LeaseOn(std::string uuid, std::string device) {
  host::Lease l;
  l.uuid = std::move(uuid);
  l.device = std::move(device);
  l.holders = {{4242, 9001}, {4250, 9100}};
  l.user = "alice";
  l.command = "python train.py";
  l.ticket = 12;
  l.since = kNow - seconds(130);
  return l;
}

host::Waiter Waiting(std::uint64_t ticket, std::string user, int count, std::string wants,
                     seconds waited) {
  host::Waiter w;
  w.ticket = ticket;
  w.holder = {static_cast<std::uint32_t>(5000 + ticket), 1};
  w.user = std::move(user);
  w.command = "python eval.py";
  w.count = count;
  w.wants = std::move(wants);
  w.since = kNow - waited;
  return w;
}

// Two GPUs (GPU-aaa, GPU-bbb); the second has MIG device 1 (MIG-ccc).
Snapshot TwoGpusOneMig() {
  Snapshot s;
  for (int i = 0; i < 2; ++i) {
    DeviceSample d;
    d.index = i;
    d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
    d.fields[FieldId::kUuid] = Reading::Text(i == 0 ? "GPU-aaa" : "GPU-bbb");
    s.devices.push_back(d);
  }
  DeviceSample m;
  m.index = 1;
  m.mig_index = 1;
  m.gpu_instance_id = 2;
  m.compute_instance_id = 0;
  m.fields[FieldId::kName] = Reading::Text("NVIDIA H200 MIG 3g.71gb");
  m.fields[FieldId::kUuid] = Reading::Text("MIG-ccc");
  s.mig_devices.push_back(m);
  return s;
}

StatusTextOptions WithLeases(host::LeaseTable table) {
  StatusTextOptions o;
  o.processes = false;
  o.leases = std::move(table);
  o.now = kNow;
  return o;
}

TEST(StatusText, HumanDuration) {
  EXPECT_EQ(HumanDuration(seconds(0)), "0s");
  EXPECT_EQ(HumanDuration(seconds(45)), "45s");
  EXPECT_EQ(HumanDuration(seconds(130)), "2m 10s");
  EXPECT_EQ(HumanDuration(seconds(3 * 3600 + 5 * 60 + 9)), "3h 5m");
  EXPECT_EQ(HumanDuration(seconds(2 * 86400 + 4 * 3600)), "2d 4h");
  EXPECT_EQ(HumanDuration(seconds(-5)), "0s") << "clock skew is not a negative age";
}

TEST(StatusText, ALeasedGpuSaysWhoHoldsItForHowLongUnderItsHeader) {
  host::LeaseTable t;
  t.leases.push_back(LeaseOn("GPU-aaa", "0"));
  const std::string text = RenderStatus(TwoGpusOneMig(), WithLeases(t));
  const std::string line = "  leased to pid 4242 (alice: python train.py) for 2m 10s, ticket #12\n";
  const auto header = text.find("GPU 0  NVIDIA H200");
  ASSERT_NE(header, std::string::npos) << text;
  EXPECT_EQ(text.find(line), text.find('\n', header) + 1) << "the line after GPU 0's header:\n"
                                                          << text;
  EXPECT_EQ(text.find("leased", text.find("GPU 1  ")), std::string::npos) << "GPU 1 is free:\n"
                                                                          << text;
  EXPECT_EQ(text.find("queue:"), std::string::npos) << "nobody waits";
}

TEST(StatusText, ALeasedMigDeviceIsShownUnderItsOwnLine) {
  host::LeaseTable t;
  host::Lease l = LeaseOn("MIG-ccc", "1:1");
  l.user = "";
  l.command = "";
  t.leases.push_back(l);
  const std::string text = RenderStatus(TwoGpusOneMig(), WithLeases(t));
  EXPECT_NE(text.find("  MIG 1  gi 2 ci 0  NVIDIA H200 MIG 3g.71gb  memory N/A / N/A\n"
                      "    leased to pid 4242 for 2m 10s, ticket #12\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("  leased"), text.find("    leased") + 2) << "only the MIG device:\n" << text;
}

TEST(StatusText, LeasesOfOtherGpusAreNotShown) {
  host::LeaseTable t;
  t.leases.push_back(LeaseOn("GPU-elsewhere", "7"));
  EXPECT_EQ(RenderStatus(TwoGpusOneMig(), WithLeases(t)).find("leased"), std::string::npos);
}

TEST(StatusText, TheQueueFollowsTheGpusInTheOrderItIsServed) {
  host::LeaseTable t;
  t.queue.push_back(Waiting(13, "bob", 2, "2 GPUs with ≥ 40.0 GiB free", seconds(65)));
  t.queue.push_back(Waiting(104, "carol", 1, "1 GPU", seconds(5)));
  const std::string text = RenderStatus(TwoGpusOneMig(), WithLeases(t));
  const std::string block =
      "queue: 2 waiting\n"
      "  #13   bob    2 GPUs with ≥ 40.0 GiB free  waiting 1m 5s\n"
      "  #104  carol  1 GPU  waiting 5s\n";
  ASSERT_GE(text.size(), block.size());
  EXPECT_EQ(text.substr(text.size() - block.size()), block) << text;
  EXPECT_GT(text.find("queue:"), text.find("GPU 1  ")) << "after every GPU";
}

TEST(StatusText, LeaseLinesAreColouredOnATerminal) {
  host::LeaseTable t;
  t.leases.push_back(LeaseOn("GPU-aaa", "0"));
  t.queue.push_back(Waiting(13, "bob", 1, "1 GPU", seconds(1)));
  StatusTextOptions o = WithLeases(t);
  o.color = true;
  const std::string text = RenderStatus(TwoGpusOneMig(), o);
  EXPECT_NE(text.find("  \033[33mleased to pid 4242"), std::string::npos) << text;
  EXPECT_NE(text.find("\033[1mqueue: 1 waiting\033[0m"), std::string::npos) << text;
}

TEST(LeaseJson, ALeaseCarriesItsHoldersAndAnIsoTime) {
  host::Lease l = LeaseOn("GPU-aaa", "0");
  l.since = system_clock::time_point(std::chrono::milliseconds(1796033018287));
  const auto j = LeaseToJson(l);
  EXPECT_EQ(j["device"], "0");
  EXPECT_EQ(j["uuid"], "GPU-aaa");
  EXPECT_EQ(j["pid"], 4242) << "the first holder";
  EXPECT_EQ(j["user"], "alice");
  EXPECT_EQ(j["command"], "python train.py");
  EXPECT_EQ(j["ticket"], 12);
  EXPECT_EQ(j["since"], "2026-11-30T10:03:38.287Z");
  ASSERT_EQ(j["holders"].size(), 2u);
  EXPECT_EQ(j["holders"][1]["pid"], 4250);
  EXPECT_EQ(j["holders"][1]["start_ticks"], 9100);
}

TEST(LeaseJson, TheQueueIsNumberedInTheOrderItIsServed) {
  host::LeaseTable t;
  t.queue.push_back(Waiting(13, "bob", 2, "2 GPUs", seconds(65)));
  t.queue.push_back(Waiting(14, "carol", 1, "1 GPU", seconds(5)));
  const auto j = LeasesToJson(t);
  EXPECT_TRUE(j["leases"].empty());
  ASSERT_EQ(j["queue"].size(), 2u);
  EXPECT_EQ(j["queue"][0]["ticket"], 13);
  EXPECT_EQ(j["queue"][0]["position"], 1);
  EXPECT_EQ(j["queue"][0]["pid"], 5013);
  EXPECT_EQ(j["queue"][0]["count"], 2);
  EXPECT_EQ(j["queue"][0]["wants"], "2 GPUs");
  EXPECT_EQ(j["queue"][1]["position"], 2);
  EXPECT_EQ(j["queue"][1]["user"], "carol");
}

TEST(LeaseJson, TheSnapshotGetsLeasesOnTheDevicesTheyName) {
  host::LeaseTable t;
  t.leases.push_back(LeaseOn("GPU-aaa", "0"));
  t.leases.push_back(LeaseOn("MIG-ccc", "1:1"));
  t.queue.push_back(Waiting(13, "bob", 1, "1 GPU", seconds(1)));
  auto every = SnapshotToJson(TwoGpusOneMig(), "h");
  AddLeases(every, t, LeaseKeys::kEveryDevice);
  EXPECT_EQ(every["devices"][0]["lease"]["uuid"], "GPU-aaa");
  EXPECT_TRUE(every["devices"][1]["lease"].is_null());
  EXPECT_EQ(every["devices"][1]["mig_devices"][0]["lease"]["device"], "1:1");
  EXPECT_EQ(every["lease_queue"].size(), 1u);

  auto where = SnapshotToJson(TwoGpusOneMig(), "h");
  AddLeases(where, host::LeaseTable{}, LeaseKeys::kWhereLeased);
  EXPECT_EQ(where, SnapshotToJson(TwoGpusOneMig(), "h")) << "nothing leased, nothing added";
  AddLeases(where, t, LeaseKeys::kWhereLeased);
  EXPECT_EQ(where["devices"][0]["lease"]["ticket"], 12);
  EXPECT_FALSE(where["devices"][1].contains("lease"));
  EXPECT_EQ(where["lease_queue"][0]["ticket"], 13);

  auto free = SnapshotToJson(TwoGpusOneMig(), "h");
  AddLeases(free, host::LeaseTable{}, LeaseKeys::kEveryDevice);
  EXPECT_TRUE(free["devices"][0]["lease"].is_null());
  EXPECT_TRUE(free["devices"][1]["mig_devices"][0]["lease"].is_null());
  EXPECT_EQ(free["lease_queue"], nlohmann::json::array());
}

TEST(SnapshotJson, AbsentIsNullWithReason) {
  const auto j = SnapshotToJson(OneGpu(), "h");
  const auto& d = j["devices"][0];
  EXPECT_TRUE(d["fields"]["fan_speed_ratio"].is_null());
  EXPECT_EQ(d["unavailable"]["fan_speed_ratio"]["reason"], "not_supported");
  EXPECT_EQ(d["unavailable"]["fan_speed_ratio"]["detail"], "nvmlDeviceGetFanSpeed: Not Supported");
  EXPECT_EQ(d["fields"]["memory_used_bytes"], 1073741824);
  EXPECT_TRUE(d["fields"]["memory_used_bytes"].is_number_integer());
  EXPECT_EQ(d["processes"][0]["visibility"], "other_pid_namespace");
  EXPECT_EQ(j["schema"], "gpuwatch.snapshot/1");
}

}  // namespace
}  // namespace gpuwatch

namespace gpuwatch {
namespace {

// Every field of every scope set, on two GPUs with a process each.
Snapshot EveryField(bool supported) {
  Snapshot s;
  for (int i = 0; i < 2; ++i) {
    DeviceSample d;
    d.index = i;
    ProcessSample p;
    p.pid = 100 + static_cast<std::uint32_t>(i);
    p.host.visibility = HostProcess::Visibility::kVisible;
    p.host.user = "ann";
    p.host.command = "python train.py";
    for (const auto& f : Catalogue()) {
      const Reading r = !supported              ? Reading::Absent(Missing::kNotSupported, "no")
                        : f.unit == Unit::kText ? Reading::Text("GPU-" + std::string(f.key))
                                                : Reading::Number(0.42 + i);
      if (DeviceFields::Holds(f.id)) d.fields[f.id] = r;
      if (ProcessFields::Holds(f.id)) p.fields[f.id] = r;
    }
    d.processes.push_back(p);
    s.devices.push_back(d);
  }
  return s;
}

// `s` with every field outside `keep` as if never read.
Snapshot Only(Snapshot s, const FieldMask& keep) {
  for (auto& d : s.devices) {
    for (const auto& f : Catalogue()) {
      if (keep.test(static_cast<std::size_t>(f.id))) continue;
      if (DeviceFields::Holds(f.id)) d.fields[f.id] = Reading();
      for (auto& p : d.processes) {
        if (ProcessFields::Holds(f.id)) p.fields[f.id] = Reading();
      }
    }
  }
  return s;
}

TEST(StatusText, ShowsNoFieldBeyondTheFieldsItReads) {
  for (bool supported : {true, false}) {
    const Snapshot all = EveryField(supported);
    const Snapshot read = Only(all, StatusTextFields());
    StatusTextOptions o;
    EXPECT_EQ(RenderStatus(read, o), RenderStatus(all, o)) << "supported " << supported;
    o.width = 200;
    EXPECT_EQ(RenderCompactStatus(read, o), RenderCompactStatus(all, o));
    if (supported) {
      EXPECT_NE(RenderStatus(Only(all, FieldMask()), o), RenderStatus(all, o))
          << "the check can fail: a status without its fields differs";
    }
  }
}

}  // namespace
}  // namespace gpuwatch
