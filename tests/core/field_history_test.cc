#include "core/field_history.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuwatch {
namespace {

using std::chrono::seconds;
using Time = std::chrono::system_clock::time_point;

Time At(int s) { return Time(seconds(1'700'000'000 + s)); }

DeviceSample Gpu(int index, double used_bytes, double temperature_c) {
  DeviceSample d;
  d.index = index;
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(used_bytes);
  d.fields[FieldId::kTemperatureGpuCelsius] = Reading::Number(temperature_c);
  return d;
}

Snapshot Sample(int s, std::vector<DeviceSample> devices) {
  Snapshot snap;
  snap.time = At(s);
  snap.devices = std::move(devices);
  return snap;
}

const std::vector<FieldId> kUsedAndTemperature = {FieldId::kMemoryUsedBytes,
                                                  FieldId::kTemperatureGpuCelsius};

TEST(FieldHistory, KeepsTheNewestCapacitySamplesOldestFirst) {
  FieldHistory h(3);
  for (int s = 0; s < 5; ++s) h.Add(Sample(s, {Gpu(0, 100.0 * s, 40 + s)}));
  EXPECT_EQ(h.size(), 3u);
  const auto w = h.Read(0, kUsedAndTemperature, At(0), At(100));
  EXPECT_EQ(w.times, (std::vector<Time>{At(2), At(3), At(4)}));
  EXPECT_EQ(w.values[0], (std::vector<double>{200, 300, 400}));
  EXPECT_EQ(w.values[1], (std::vector<double>{42, 43, 44}));
}

TEST(FieldHistory, ReadsOnlyFromInclusiveToExclusive) {
  FieldHistory h(10);
  for (int s = 0; s < 6; ++s) h.Add(Sample(s, {Gpu(0, s, 0)}));
  const auto w = h.Read(0, {FieldId::kMemoryUsedBytes}, At(2), At(4));
  EXPECT_EQ(w.times, (std::vector<Time>{At(2), At(3)}));
  EXPECT_EQ(w.values[0], (std::vector<double>{2, 3}));
}

TEST(FieldHistory, WhatHeldNoNumberIsNaN) {
  FieldHistory h(10);
  DeviceSample unsupported = Gpu(0, 1, 50);
  unsupported.fields[FieldId::kTemperatureGpuCelsius] = Reading::Absent(Missing::kNotSupported);
  DeviceSample lost = Gpu(0, 2, 51);
  lost.health = DeviceHealth::kLost;
  h.Add(Sample(0, {Gpu(0, 0, 49)}));
  h.Add(Sample(1, {unsupported}));
  h.Add(Sample(2, {lost}));          // a GPU that is not healthy: nothing of it counts
  h.Add(Sample(3, {Gpu(1, 9, 9)}));  // GPU 0 absent
  h.Add(Sample(4, {Gpu(0, 4, 53)}));
  const auto w = h.Read(0, kUsedAndTemperature, At(0), At(10));
  ASSERT_EQ(w.times.size(), 5u);
  EXPECT_EQ(w.values[0][0], 0);
  EXPECT_EQ(w.values[0][1], 1);
  EXPECT_EQ(w.values[1][0], 49);
  EXPECT_TRUE(std::isnan(w.values[1][1])) << "not supported";
  EXPECT_TRUE(std::isnan(w.values[0][2]) && std::isnan(w.values[1][2])) << "lost";
  EXPECT_TRUE(std::isnan(w.values[0][3]) && std::isnan(w.values[1][3])) << "absent";
  EXPECT_EQ(w.values[0][4], 4);
  EXPECT_EQ(w.values[1][4], 53);
}

TEST(FieldHistory, AGpuSeenLateHasNaNBeforeAndOneNeverSeenHasNaNThroughout) {
  FieldHistory h(10);
  h.Add(Sample(0, {Gpu(0, 0, 0)}));
  h.Add(Sample(1, {Gpu(0, 0, 0), Gpu(1, 7, 0)}));
  const auto late = h.Read(1, {FieldId::kMemoryUsedBytes}, At(0), At(10));
  ASSERT_EQ(late.values[0].size(), 2u);
  EXPECT_TRUE(std::isnan(late.values[0][0]));
  EXPECT_EQ(late.values[0][1], 7);
  const auto never = h.Read(5, {FieldId::kMemoryUsedBytes}, At(0), At(10));
  ASSERT_EQ(never.values[0].size(), 2u) << "the times are the samples', whatever the GPU";
  EXPECT_TRUE(std::isnan(never.values[0][0]) && std::isnan(never.values[0][1]));
}

TEST(FieldHistory, AFieldFirstReadLateHasNaNBeforeEvenAfterTheRingWrapped) {
  FieldHistory h(3);
  DeviceSample no_temperature = Gpu(0, 1, 0);
  no_temperature.fields[FieldId::kTemperatureGpuCelsius] = Reading::Absent(Missing::kNotYetSampled);
  for (int s = 0; s < 4; ++s) h.Add(Sample(s, {no_temperature}));
  h.Add(Sample(4, {Gpu(0, 1, 60)}));
  const auto w = h.Read(0, {FieldId::kTemperatureGpuCelsius}, At(0), At(10));
  ASSERT_EQ(w.values[0].size(), 3u);
  EXPECT_TRUE(std::isnan(w.values[0][0]) && std::isnan(w.values[0][1]));
  EXPECT_EQ(w.values[0][2], 60);
}

TEST(FieldHistory, AStaleSnapshotIsNotASample) {
  FieldHistory h(10);
  h.Add(Sample(0, {Gpu(0, 1, 0)}));
  Snapshot stale = Sample(1, {Gpu(0, 1, 0)});
  stale.stale = true;
  h.Add(stale);
  EXPECT_EQ(h.size(), 1u);
}

}  // namespace
}  // namespace gpuwatch
