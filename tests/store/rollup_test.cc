#include "store/rollup.h"

#include <gtest/gtest.h>

#include "store/history_reader.h"
#include "store/history_writer.h"
#include "store/schema.h"
#include "store_test_util.h"

namespace gpuwatch::store {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using testing::At;
using testing::QueryNumber;
using testing::ScratchDir;

// A sample every 10 s for `span`: memory_used_bytes = i (the sample's
// number), utilization 0.5 on even samples and absent on odd ones.
void WriteTenSecondSamples(const std::string& path, std::chrono::seconds span,
                           HistoryOptions opts = {}, std::vector<Event> events = {}) {
  opts.queue_capacity = 100000;  // appends outrun the writer here; keep them all
  auto w = HistoryWriter::Open(path, opts);
  ASSERT_TRUE(w.has_value()) << w.status().message();
  for (std::int64_t i = 0; i * 10 < span.count(); ++i) {
    auto s = std::make_shared<Snapshot>(*testing::OneDevice(i * 10000, static_cast<double>(i)));
    s->devices[0].fields[FieldId::kUtilizationGpuRatio] =
        i % 2 == 0 ? Reading::Number(0.5) : Reading::Absent(Missing::kFailed);
    (*w)->Append(std::move(s));
  }
  for (Event& e : events) (*w)->Append(std::move(e));
  ASSERT_TRUE((*w)->Flush().ok());
  ASSERT_EQ((*w)->stats().snapshots_dropped, 0u);
}

// Runs maintenance until it has nothing left to do.
void MaintainFully(const std::string& path, const Retention& retention) {
  auto db = Db::Open(path, Db::Mode::kReadWriteCreate);
  ASSERT_TRUE(db.has_value()) << db.status().message();
  for (int i = 0; i < 1000; ++i) {
    Result<bool> more = Maintain(*db, retention);
    ASSERT_TRUE(more.has_value()) << more.status().message();
    if (!*more) return;
  }
  FAIL() << "maintenance never finished";
}

const FieldId kFields[] = {FieldId::kMemoryUsedBytes, FieldId::kUtilizationGpuRatio};

TEST(Rollup, MinuteTierHoldsAverageMinimumAndMaximum) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  WriteTenSecondSamples(path, hours(2));
  MaintainFully(path, Retention{});

  auto r = HistoryReader::Open(path);
  ASSERT_TRUE(r.has_value());
  auto s = r->DeviceSamples(1, kFields, At(0), At(2 * 3600 * 1000), {}, Tier::kMinute);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_EQ(s->tier, Tier::kMinute);
  ASSERT_EQ(s->points.size(), 120u);
  // Minute 0 holds samples 0..5, minute 1 samples 6..11.
  EXPECT_EQ(s->points[0].time, At(0));
  EXPECT_EQ(s->points[0].values[0], (Aggregate{2.5, 0.0, 5.0}));
  EXPECT_EQ(s->points[1].values[0], (Aggregate{8.5, 6.0, 11.0}));
  // Absent readings are left out, not averaged in as 0.
  EXPECT_EQ(s->points[0].values[1], (Aggregate{0.5, 0.5, 0.5}));
  // The last minute is not complete yet: it comes from raw rows, same shape.
  EXPECT_EQ(s->points[119].time, At(119 * 60 * 1000));
  EXPECT_EQ(s->points[119].values[0], (Aggregate{716.5, 714.0, 719.0}));
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_minute"), 119);
}

TEST(Rollup, HourTierHoldsAverageMinimumAndMaximum) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  WriteTenSecondSamples(path, hours(2));
  MaintainFully(path, Retention{});

  auto r = HistoryReader::Open(path);
  ASSERT_TRUE(r.has_value());
  auto s = r->DeviceSamples(1, kFields, At(0), At(2 * 3600 * 1000), {}, Tier::kHour);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  ASSERT_EQ(s->points.size(), 2u);
  EXPECT_EQ(s->points[0].values[0], (Aggregate{179.5, 0.0, 359.0}));
  EXPECT_EQ(s->points[1].values[0], (Aggregate{539.5, 360.0, 719.0}));  // from raw
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_hour"), 1);
  EXPECT_EQ(QueryNumber(path, "SELECT n FROM device_hour"), 360);
}

TEST(Rollup, WiderStepsMergeMinutesWeightedBySampleCount) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  WriteTenSecondSamples(path, hours(2));
  MaintainFully(path, Retention{});
  auto r = HistoryReader::Open(path);
  ASSERT_TRUE(r.has_value());
  auto s = r->DeviceSamples(1, kFields, At(0), At(3600 * 1000), minutes(5), Tier::kMinute);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  ASSERT_EQ(s->points.size(), 12u);
  EXPECT_EQ(s->points[0].values[0], (Aggregate{14.5, 0.0, 29.0}));
  EXPECT_EQ(s->points[1].time, At(5 * 60 * 1000));
}

TEST(Rollup, RawStepGroupsSamples) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  WriteTenSecondSamples(path, minutes(10));
  auto r = HistoryReader::Open(path);
  ASSERT_TRUE(r.has_value());
  auto s = r->DeviceSamples(1, kFields, At(0), At(60 * 1000), seconds(30));
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_EQ(s->tier, Tier::kRaw);
  ASSERT_EQ(s->points.size(), 2u);
  EXPECT_EQ(s->points[1].values[0], (Aggregate{4.0, 3.0, 5.0}));
}

TEST(Retention, DeletesRowsOlderThanEachTiersRetention) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  Retention keep;
  keep.raw = hours(1);
  keep.minute = hours(2);
  keep.hour = hours(24);
  Event old_event;
  old_event.time = At(-48 * 3600 * 1000);
  old_event.message = "two days ago";
  Event new_event;
  new_event.time = At(4 * 3600 * 1000);
  new_event.message = "recent";
  HistoryOptions opts;
  opts.retention = keep;
  WriteTenSecondSamples(path, hours(5), opts, {old_event, new_event});
  MaintainFully(path, keep);

  const std::int64_t newest = testing::kT0Ms + (5 * 3600 - 10) * 1000;
  EXPECT_GE(QueryNumber(path, "SELECT min(ts) FROM device_raw"), newest - 3600 * 1000);
  EXPECT_GE(QueryNumber(path, "SELECT min(ts) FROM device_minute"), newest - 2 * 3600 * 1000);
  EXPECT_LE(QueryNumber(path, "SELECT min(ts) FROM device_minute"),
            newest - 2 * 3600 * 1000 + 60 * 1000);
  EXPECT_EQ(QueryNumber(path, "SELECT min(ts) FROM device_hour"), testing::kT0Ms);
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_hour"), 4);
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM events"), 1);
  EXPECT_EQ(testing::QueryText(path, "SELECT message FROM events"), "recent");
}

TEST(Retention, RawRowsStayUntilBothTiersCoverThem) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  Retention keep;
  keep.raw = seconds(1);
  HistoryOptions opts;
  opts.retention = keep;
  WriteTenSecondSamples(path, minutes(90), opts);
  MaintainFully(path, keep);
  // The second hour is not complete: its raw rows are all still there.
  EXPECT_EQ(QueryNumber(path, "SELECT min(ts) FROM device_raw"), testing::kT0Ms + 3600 * 1000);
  auto r = HistoryReader::Open(path);
  ASSERT_TRUE(r.has_value());
  auto s = r->DeviceSamples(1, kFields, At(0), At(2 * 3600 * 1000), {}, Tier::kHour);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->points.size(), 2u);
  EXPECT_EQ(s->points[1].values[0].min, 360.0);
}

TEST(HistoryReader, ChoosesACoarserTierWhereRawIsGone) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  Retention keep;
  keep.raw = hours(1);
  HistoryOptions opts;
  opts.retention = keep;
  WriteTenSecondSamples(path, hours(5), opts);
  MaintainFully(path, keep);
  auto r = HistoryReader::Open(path);
  ASSERT_TRUE(r.has_value());
  // Two hours from the start: short enough for raw, but raw is gone there.
  auto s = r->DeviceSamples(1, kFields, At(0), At(2 * 3600 * 1000));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->tier, Tier::kMinute);
  EXPECT_EQ(s->points.size(), 120u);
  // The last hour is still raw.
  auto recent =
      r->DeviceSamples(1, kFields, At(4 * 3600 * 1000 + 1800 * 1000), At(5 * 3600 * 1000));
  ASSERT_TRUE(recent.has_value());
  EXPECT_EQ(recent->tier, Tier::kRaw);
  EXPECT_EQ(recent->points.size(), 180u);
}

}  // namespace
}  // namespace gpuwatch::store
