// The hub's event rings: a flood of marks (which any local job may send over
// `serve --socket`) never pushes out an alert, and the API and the stream get
// both kinds in time order.
#include "server/hub.h"

#include <gtest/gtest.h>

namespace gpuwatch::server {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;

const system_clock::time_point kT0 = system_clock::time_point(seconds(1796033018));

Event Make(Event::Kind kind, int at_s, std::string message) {
  Event e;
  e.time = kT0 + seconds(at_s);
  e.kind = kind;
  e.source = kind == Event::Kind::kMark ? "step" : "gpu_hot";
  e.message = std::move(message);
  return e;
}

void Publish(Hub& hub, const std::vector<Event>& events) {
  hub.Publish(std::make_shared<Snapshot>(), {}, {}, events);
}

std::vector<std::string> Messages(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.message);
  return out;
}

TEST(Hub, AFloodOfMarksNeverPushesOutAnAlert) {
  Hub hub;  // 5000 events, 1000 marks
  Publish(hub, {Make(Event::Kind::kAlertFiring, 0, "GPU 0 is hot")});
  // 20,000 marks in 2 s, as the probe sent them, a snapshot's worth at a time.
  for (int batch = 0; batch < 20; ++batch) {
    std::vector<Event> marks;
    for (int i = 0; i < 1000; ++i) {
      marks.push_back(Make(Event::Kind::kMark, 1, "step " + std::to_string(batch * 1000 + i)));
    }
    Publish(hub, marks);
  }
  EXPECT_EQ(hub.event_count(), 20'001u) << "every event is numbered";

  const auto all = hub.EventsAfter(0);
  ASSERT_EQ(all.size(), 1001u);
  EXPECT_EQ(all.front().message, "GPU 0 is hot") << "the SSE stream still has the alert";
  EXPECT_EQ(all[1].message, "step 19000") << "the newest 1000 marks, in order";
  EXPECT_EQ(all.back().message, "step 19999");

  const auto api = hub.EventsSince(kT0, 1000);  // /api/v1/events' default limit
  ASSERT_EQ(api.size(), 1000u);
  EXPECT_EQ(api.front().message, "GPU 0 is hot") << "not hidden behind 1000 marks";
  EXPECT_EQ(api[1].message, "step 19001");
  EXPECT_EQ(api.back().message, "step 19999");
}

TEST(Hub, BothKindsComeInTimeOrderAndEachRingKeepsItsNewest) {
  Hub hub(/*max_events=*/2, /*max_marks=*/2);
  Publish(hub, {Make(Event::Kind::kAlertFiring, 0, "a1"), Make(Event::Kind::kMark, 1, "m1"),
                Make(Event::Kind::kDiagnosis, 2, "d1")});
  Publish(hub, {Make(Event::Kind::kMark, 3, "m2"), Make(Event::Kind::kAlertResolved, 4, "a2"),
                Make(Event::Kind::kMark, 5, "m3")});
  EXPECT_EQ(Messages(hub.EventsAfter(0)), (std::vector<std::string>{"d1", "m2", "a2", "m3"}))
      << "a1 and m1 pushed out, each by its own kind";
  EXPECT_EQ(Messages(hub.EventsAfter(4)), (std::vector<std::string>{"a2", "m3"}))
      << "the stream's cursor is the sequence across both rings";
  EXPECT_EQ(Messages(hub.EventsSince(kT0 + seconds(3), 10)),
            (std::vector<std::string>{"m2", "a2", "m3"}));
  EXPECT_EQ(Messages(hub.EventsSince(kT0, 3)), (std::vector<std::string>{"d1", "a2", "m3"}))
      << "over the limit, the other events before marks, then in time order";
}

TEST(Hub, SequencedEventsCarryTheirNumberAcrossBothRings) {
  Hub hub(/*max_events=*/2, /*max_marks=*/2);
  Publish(hub,
          {Make(Event::Kind::kAlertFiring, 0, "a1"), Make(Event::Kind::kMark, 1, "m1"),
           Make(Event::Kind::kAlertFiring, 2, "a2"), Make(Event::Kind::kAlertFiring, 3, "a3")});
  // a1 (1) fell out of its ring; m1 (2), a2 (3), a3 (4) are kept.
  std::uint64_t newest = 0;
  const auto after1 = hub.SequencedEventsAfter(1, &newest);
  EXPECT_EQ(newest, 4u);
  ASSERT_EQ(after1.size(), 3u);
  EXPECT_EQ(after1[0].sequence, 2u);
  EXPECT_EQ(after1[0].event.message, "m1");
  EXPECT_EQ(after1[1].sequence, 3u);
  EXPECT_EQ(after1[2].sequence, 4u);
  EXPECT_EQ(after1[2].event.message, "a3");
  const auto after3 = hub.SequencedEventsAfter(3);
  ASSERT_EQ(after3.size(), 1u);
  EXPECT_EQ(after3[0].event.message, "a3");
  EXPECT_TRUE(hub.SequencedEventsAfter(4).empty());
}

// A failed call counts once per GPU, however many fields it fills; other
// missing values (not supported, not yet sampled) are not failures.
TEST(Hub, FailedCallsCountEachCallOncePerGpu) {
  Snapshot s;
  for (int gpu = 0; gpu < 2; ++gpu) {
    DeviceSample d;
    d.index = gpu;
    for (FieldId id :
         {FieldId::kMemoryUsedBytes, FieldId::kMemoryTotalBytes, FieldId::kMemoryFreeBytes}) {
      d.fields[id] = Reading::Absent(Missing::kFailed, "nvmlDeviceGetMemoryInfo_v2: Unknown Error");
    }
    d.fields[FieldId::kFanSpeedRatio] =
        Reading::Absent(Missing::kNotSupported, "nvmlDeviceGetFanSpeed: Not Supported");
    s.devices.push_back(d);
  }
  s.devices[1].fields[FieldId::kPowerDrawWatts] =
      Reading::Absent(Missing::kFailed, "nvmlDeviceGetPowerUsage: Unknown Error");
  const auto calls = FailedCalls(s);
  EXPECT_EQ(calls, (std::map<std::string, std::uint64_t>{{"nvmlDeviceGetMemoryInfo_v2", 2},
                                                         {"nvmlDeviceGetPowerUsage", 1}}));
}

// Calls counted at 0 exist from then on (the daemon names every call a sample
// makes, so that each error counter starts at 0); a publication carries the
// counts made before it, and keeps them while later ones are counted.
TEST(Hub, CallsCountedAtZeroAreKept) {
  Hub hub;
  hub.CountErrors({{"nvmlDeviceGetPowerUsage", 0}, {"nvmlDeviceGetTemperature", 0}});
  hub.CountErrors({{"nvmlDeviceGetPowerUsage", 2}});
  EXPECT_TRUE(hub.Latest()->nvml_errors.empty()) << "nothing published yet";
  hub.Publish(std::make_shared<Snapshot>(), {}, {}, {});
  const auto first = hub.Latest();
  EXPECT_EQ(first->nvml_errors,
            (std::map<std::string, std::uint64_t>{{"nvmlDeviceGetPowerUsage", 2},
                                                  {"nvmlDeviceGetTemperature", 0}}));
  hub.CountErrors({{"nvmlDeviceGetTemperature", 1}});
  EXPECT_EQ(first->nvml_errors.at("nvmlDeviceGetTemperature"), 0u);
  hub.Publish(std::make_shared<Snapshot>(), {}, {}, {});
  EXPECT_EQ(hub.Latest()->nvml_errors.at("nvmlDeviceGetTemperature"), 1u);
  EXPECT_EQ(hub.Latest()->nvml_errors.at("nvmlDeviceGetPowerUsage"), 2u);
}

}  // namespace
}  // namespace gpuwatch::server
