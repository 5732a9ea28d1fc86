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
  const Choice choice = Choose(s, c, std::set<int>{0, 1, 2});
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
  auto v = VisibleIndices(std::nullopt, std::nullopt, same);
  ASSERT_TRUE(v);
  EXPECT_FALSE(*v) << "unset: every GPU";
  v = VisibleIndices("3, 1", std::nullopt, same);
  ASSERT_TRUE(v);
  EXPECT_EQ(**v, (std::set<int>{1, 3})) << "one model: CUDA's order and NVML's agree";
  v = VisibleIndices("GPU-2aaaa,9,0", std::nullopt, same);
  ASSERT_TRUE(v);
  EXPECT_EQ(**v, (std::set<int>{2})) << "a UUID prefix; 9 names no GPU, so 0 after it is ignored";
  v = VisibleIndices("", std::nullopt, same);
  ASSERT_TRUE(v);
  EXPECT_TRUE((*v)->empty()) << "set but empty: no GPU";

  const Snapshot mixed = Fleet({Gpu(0, 0, 0), Gpu(1, 0, 0, "NVIDIA L40S")});
  v = VisibleIndices("1", std::nullopt, mixed);
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message().find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos);
  v = VisibleIndices("1", "PCI_BUS_ID", mixed);
  ASSERT_TRUE(v);
  EXPECT_EQ(**v, (std::set<int>{1}));
  v = VisibleIndices("GPU-1aaaa", std::nullopt, mixed);
  ASSERT_TRUE(v) << "UUIDs need no order";
  EXPECT_EQ(**v, (std::set<int>{1}));
}

}  // namespace
}  // namespace gpuwatch::select
