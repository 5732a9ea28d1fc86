// Selection over hand-made snapshots: limits, order, CUDA_VISIBLE_DEVICES,
// memory of users counted as free, and the reasons given for every GPU.
#include "analysis/select/selection.h"

#include <gtest/gtest.h>

namespace gpuwatch::select {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

DeviceSample Gpu(int index, double used_gib, double util, std::string name = "NVIDIA H200") {
  DeviceSample d;
  d.index = index;
  d.fields[FieldId::kName] = Reading::Text(name);
  d.fields[FieldId::kUuid] = Reading::Text("GPU-" + std::to_string(index) + "aaaa-bbbb");
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(100 * kGiB);
  d.fields[FieldId::kMemoryFreeBytes] = Reading::Number((100 - used_gib) * kGiB);
  d.fields[FieldId::kUtilizationGpuRatio] = Reading::Number(util);
  return d;
}

Snapshot Fleet(std::vector<DeviceSample> devices) {
  Snapshot s;
  s.devices = std::move(devices);
  return s;
}

std::vector<int> Indices(const Choice& c) {
  std::vector<int> out;
  for (const auto& x : c.chosen) out.push_back(x.index);
  return out;
}

TEST(Selection, LeastLoadedFirstAndEveryLimitGivesItsReason) {
  const Snapshot s = Fleet({Gpu(0, 90, 0.9), Gpu(1, 10, 0.1), Gpu(2, 50, 0.0), Gpu(3, 5, 0.6)});
  Criteria c;
  c.count = 2;
  EXPECT_EQ(Indices(Choose(s, c, std::nullopt)), (std::vector<int>{1, 2}))
      << "load = utilization + memory used: 0.2, 0.5, 0.65, 1.8";
  c.min_free_bytes = 60 * kGiB;
  c.max_utilization = 0.5;
  const Choice limited = Choose(s, c, std::nullopt);
  EXPECT_EQ(Indices(limited), (std::vector<int>{1}));
  EXPECT_EQ(limited.candidates[0].reasons,
            (std::vector<std::string>{"10.0 GiB free < 60.0 GiB", "utilization 90 % > 50 %"}));
  EXPECT_EQ(limited.candidates[2].reasons, (std::vector<std::string>{"50.0 GiB free < 60.0 GiB"}));
  EXPECT_EQ(limited.candidates[3].reasons, (std::vector<std::string>{"utilization 60 % > 50 %"}));
}

TEST(Selection, OrdersByMemoryIndexOrRandomly) {
  const Snapshot s = Fleet({Gpu(0, 30, 0.0), Gpu(1, 10, 0.9), Gpu(2, 20, 0.0)});
  Criteria c;
  c.count = 3;
  c.order = Order::kMemory;
  EXPECT_EQ(Indices(Choose(s, c, std::nullopt)), (std::vector<int>{1, 2, 0}));
  c.order = Order::kIndex;
  EXPECT_EQ(Indices(Choose(s, c, std::nullopt)), (std::vector<int>{0, 1, 2}));
  c.order = Order::kRandom;
  std::set<std::vector<int>> seen;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    c.seed = seed;
    seen.insert(Indices(Choose(s, c, std::nullopt)));
  }
  EXPECT_GT(seen.size(), 1u) << "different seeds, different orders";
  EXPECT_FALSE(ParseOrder("fastest")) << "unknown order";
  EXPECT_NE(ParseOrder("fastest").error().message().find("load, memory, index or random"),
            std::string::npos);
}

TEST(Selection, ExcludedLostAndInvisibleGpusAreNeverChosen) {
  DeviceSample lost = Gpu(2, 0, 0);
  lost.health = DeviceHealth::kLost;
  lost.health_detail = "GPU is lost";
  const Snapshot s = Fleet({Gpu(0, 0, 0), Gpu(1, 0, 0), lost, Gpu(3, 0, 0)});
  Criteria c;
  c.count = 4;
  c.exclude = {1};
  const Choice choice =
      Choose(s, c, std::set<std::string>{"GPU-0aaaa-bbbb", "GPU-1aaaa-bbbb", "GPU-2aaaa-bbbb"});
  EXPECT_EQ(Indices(choice), (std::vector<int>{0}));
  EXPECT_EQ(choice.candidates[1].reasons, (std::vector<std::string>{"excluded"}));
  EXPECT_EQ(choice.candidates[2].reasons, (std::vector<std::string>{"not healthy (GPU is lost)"}));
  EXPECT_EQ(choice.candidates[3].reasons,
            (std::vector<std::string>{"not in CUDA_VISIBLE_DEVICES"}));
}

TEST(Selection, AUsersMemoryCanCountAsFree) {
  DeviceSample d = Gpu(0, 80, 0.1);
  ProcessSample mine;
  mine.pid = 7;
  mine.host.user = "alice";
  mine.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(70 * kGiB);
  d.processes.push_back(mine);
  Criteria c;
  c.min_free_bytes = 50 * kGiB;
  EXPECT_TRUE(Choose(Fleet({d}), c, std::nullopt).chosen.empty());
  c.free_users = {"alice"};
  const Choice choice = Choose(Fleet({d}), c, std::nullopt);
  ASSERT_EQ(choice.chosen.size(), 1u);
  EXPECT_DOUBLE_EQ(choice.chosen[0].free_bytes, 90 * kGiB);
}

TEST(Selection, CudaVisibleDevicesMapsOrdinalsAndUuidsAndStopsAtTheFirstUnknown) {
  const Snapshot same = Fleet({Gpu(0, 0, 0), Gpu(1, 0, 0), Gpu(2, 0, 0), Gpu(3, 0, 0)});
  auto v = VisibleDevices(std::nullopt, std::nullopt, same);
  ASSERT_TRUE(v);
  EXPECT_FALSE(*v) << "unset: every GPU";
  v = VisibleDevices("3, 1", std::nullopt, same);
  ASSERT_TRUE(v);
  EXPECT_EQ(**v, (std::set<std::string>{"GPU-1aaaa-bbbb", "GPU-3aaaa-bbbb"}))
      << "one model: CUDA's order and NVML's agree";
  v = VisibleDevices("GPU-2aaaa,9,0", std::nullopt, same);
  ASSERT_TRUE(v);
  EXPECT_EQ(**v, (std::set<std::string>{"GPU-2aaaa-bbbb"}))
      << "a UUID prefix; 9 names no GPU, so 0 after it is ignored";
  v = VisibleDevices("", std::nullopt, same);
  ASSERT_TRUE(v);
  EXPECT_TRUE((*v)->empty()) << "set but empty: no GPU";

  const Snapshot mixed = Fleet({Gpu(0, 0, 0), Gpu(1, 0, 0, "NVIDIA L40S")});
  v = VisibleDevices("1", std::nullopt, mixed);
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message().find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos);
  v = VisibleDevices("1", "PCI_BUS_ID", mixed);
  ASSERT_TRUE(v);
  EXPECT_EQ(**v, (std::set<std::string>{"GPU-1aaaa-bbbb"}));
  v = VisibleDevices("GPU-1aaaa", std::nullopt, mixed);
  ASSERT_TRUE(v) << "UUIDs need no order";
  EXPECT_EQ(**v, (std::set<std::string>{"GPU-1aaaa-bbbb"}));
}

TEST(Selection, LeasedGpusAreTakenAndSayByWhom) {
  const Snapshot s = Fleet({Gpu(0, 0, 0), Gpu(1, 50, 0.5)});
  Criteria c;
  c.taken["GPU-0aaaa-bbbb"] = "leased to pid 12 (alice: python train.py)";
  const Choice choice = Choose(s, c, std::nullopt);
  EXPECT_EQ(Indices(choice), (std::vector<int>{1})) << "the busier GPU, because 0 is leased";
  EXPECT_EQ(choice.candidates[0].reasons,
            (std::vector<std::string>{"leased to pid 12 (alice: python train.py)"}));
}

// GPU 0 whole; GPU 1 in MIG mode with two instances, alice on the first.
Snapshot MigFleet() {
  DeviceSample parent = Gpu(1, 30, 0);
  parent.fields[FieldId::kMigMode] = Reading::Number(1);
  parent.fields[FieldId::kUtilizationGpuRatio] = Reading();
  ProcessSample p;
  p.pid = 9;
  p.host.user = "alice";
  p.gpu_instance_id = 1;
  p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(30 * kGiB);
  parent.processes.push_back(p);
  Snapshot s = Fleet({Gpu(0, 90, 0.9), parent});
  for (int i = 0; i < 2; ++i) {
    DeviceSample m;
    m.index = 1;
    m.mig_index = i;
    m.gpu_instance_id = static_cast<std::uint32_t>(i + 1);
    m.fields[FieldId::kUuid] = Reading::Text("MIG-" + std::to_string(i) + "cccc-dddd");
    m.fields[FieldId::kMemoryTotalBytes] = Reading::Number(40 * kGiB);
    m.fields[FieldId::kMemoryUsedBytes] = Reading::Number((i == 0 ? 30 : 0) * kGiB);
    s.mig_devices.push_back(m);
  }
  return s;
}

TEST(Selection, MigDevicesAreCandidatesByUuidAndTheirGpuIsNot) {
  const Snapshot s = MigFleet();
  Criteria c;
  c.min_free_bytes = 20 * kGiB;
  Choice choice = Choose(s, c, std::nullopt);
  ASSERT_EQ(choice.candidates.size(), 4u);
  EXPECT_EQ(choice.candidates[1].id, "1");
  EXPECT_EQ(choice.candidates[1].reasons,
            (std::vector<std::string>{"MIG mode on: its MIG devices (1:0, 1:1) are offered"}));
  EXPECT_EQ(choice.candidates[2].id, "1:0");
  EXPECT_EQ(choice.candidates[2].reasons, (std::vector<std::string>{"10.0 GiB free < 20.0 GiB"}))
      << "free memory from total - used when NVML gives no free";
  ASSERT_EQ(choice.chosen.size(), 1u);
  EXPECT_EQ(choice.chosen[0].uuid, "MIG-1cccc-dddd");
  EXPECT_EQ(choice.chosen[0].id, "1:1");

  c.free_users = {"alice"};
  c.min_free_bytes = 35 * kGiB;
  choice = Choose(s, c, std::nullopt);
  ASSERT_EQ(choice.chosen.size(), 1u);
  EXPECT_EQ(choice.chosen[0].id, "1:0") << "alice's 30 GiB on instance 1:0 counts as free";

  auto v = VisibleDevices("MIG-1", std::nullopt, s);
  ASSERT_TRUE(v);
  EXPECT_EQ(**v, (std::set<std::string>{"MIG-1cccc-dddd"}));
  c.free_users.clear();
  c.min_free_bytes.reset();
  choice = Choose(s, c, *v);
  ASSERT_EQ(choice.chosen.size(), 1u);
  EXPECT_EQ(choice.chosen[0].id, "1:1");
  v = VisibleDevices("1", std::nullopt, s);
  ASSERT_TRUE(v);
  choice = Choose(s, c, *v);
  ASSERT_EQ(choice.chosen.size(), 1u) << "a listed GPU shows its MIG devices";
  EXPECT_EQ(choice.chosen[0].id, "1:1") << "the less loaded of the two";
}

TEST(Selection, MigDevicesCompeteOnMemoryAndAreOnlyGivenAlone) {
  const Snapshot s = MigFleet();
  Criteria c;
  Choice choice = Choose(s, c, std::nullopt);
  ASSERT_EQ(choice.chosen.size(), 1u);
  EXPECT_EQ(choice.chosen[0].id, "1:1") << "an idle MIG device before a busy GPU";
  c.max_utilization = 0.95;
  choice = Choose(s, c, std::nullopt);
  ASSERT_EQ(choice.chosen.size(), 1u);
  EXPECT_EQ(choice.chosen[0].id, "0") << "MIG utilization is unknown: --max-util rules it out";
  c.max_utilization.reset();
  c.count = 2;
  choice = Choose(s, c, std::nullopt);
  EXPECT_EQ(choice.chosen.size(), 1u);
  EXPECT_EQ(
      choice.candidates[3].reasons,
      (std::vector<std::string>{"a MIG device is only given alone: CUDA shows a process one"}));
}

}  // namespace
}  // namespace gpuwatch::select
