// ReplayBackend on bad and damaged SQLite histories (no samples, no GPUs,
// indices out of range, not a regular file, not a history at all), each an
// error naming the file and what is wrong, and the format sniff that tells a
// history from a JSON Lines recording by content, not name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "export/lines.h"
#include "history_fixture.h"

namespace gpuwatch {
namespace {

using namespace history_test;
using ::testing::HasSubstr;

TEST_F(ReplayDir, HistoryWithDevicesButNoSamplesIsAnError) {
  const std::string path = File("empty-raw.db");
  WriteSamples(*Writer(path), 0, 2);
  Sql(path, "DELETE FROM process_raw; DELETE FROM device_raw");
  const std::string message = ErrorOf(path);
  EXPECT_THAT(message, HasSubstr(path + ": no samples"));
  EXPECT_THAT(message, HasSubstr("lists 2 GPU(s) but holds no raw samples"));
}

TEST_F(ReplayDir, HistoryWithoutGpusIsAnError) {
  const std::string path = File("no-gpus.db");
  {
    auto w = Writer(path);
    w->AppendMark({kHistoryT0, store::Mark::Kind::kStep, 1.0, "", std::nullopt});
    ASSERT_TRUE(w->Flush().ok());
  }
  EXPECT_THAT(ErrorOf(path), HasSubstr(path + ": no samples (the history holds no GPUs)"));
}

TEST_F(ReplayDir, BadFilesAreErrorsNamingTheFile) {
  const std::string empty = File("empty.db");
  std::ofstream(empty).close();
  EXPECT_THAT(ErrorOf(empty), HasSubstr(empty + ": empty file"));

  const std::string noise = File("noise.bin");
  std::ofstream(noise, std::ios::binary) << std::string("\x01\x02\xff\xfe random bytes\n", 19);
  EXPECT_THAT(ErrorOf(noise), HasSubstr(noise + ":1: not a JSON object"));

  const std::string corrupt = File("corrupt.db");
  std::ofstream(corrupt, std::ios::binary)
      << std::string("SQLite format 3\0", 16) << std::string(4000, '\x5a');
  EXPECT_THAT(ErrorOf(corrupt), HasSubstr("'" + corrupt + "'"));

  const std::string foreign = File("foreign.db");
  Sql(foreign, "CREATE TABLE songs(title TEXT); INSERT INTO songs VALUES('x')");
  EXPECT_THAT(ErrorOf(foreign), HasSubstr("'" + foreign + "': not a gpuwatch history"));

  // Says it is a gpuwatch history (application id, version) but has no tables.
  const std::string hollow = File("hollow.db");
  Sql(hollow, "PRAGMA application_id=1735423860; PRAGMA user_version=1; CREATE TABLE x(y)");
  EXPECT_THAT(ErrorOf(hollow), HasSubstr("'" + hollow +
                                         "': not a gpuwatch history (missing tables: devices, "
                                         "processes, events, marks, device_raw, process_raw)"));

  EXPECT_THAT(ErrorOf(dir_.string()), HasSubstr(dir_.string() + " is a directory"));
  auto missing = ReplayBackend::Open({File("nope.db"), 0});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Status::Code::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr(File("nope.db")));
}

TEST_F(ReplayDir, FormatIsToldByContentNotByName) {
  const std::string history = File("looks-like.jsonl");
  WriteSamples(*Writer(history), 0, 2);
  auto h = Replay(history);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->format(), ReplayBackend::Format::kHistory);
  EXPECT_EQ(h->samples(), 2u);

  const std::string lines = File("looks-like.db");
  std::ofstream(lines) << JsonlHeader(*HistorySample(0), "node-1") << "\n"
                       << JsonlSample(*HistorySample(0)) << "\n";
  auto j = Replay(lines);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->format(), ReplayBackend::Format::kJsonLines);
  EXPECT_EQ(j->hostname(), "node-1");
  EXPECT_EQ(j->DeviceCount(), 2);
}

// A damaged or forged history: indices that would size the replay (100000
// GPUs took 2.2 GB; 99999999999 had no bound) are refused, naming the table
// and the value.
TEST_F(ReplayDir, HistoryDeviceIndexOutsideTheRangeIsRefusedNamingTableAndValue) {
  const std::string path = File("forged.db");
  WriteSamples(*Writer(path), 0, 2);
  for (const std::string idx : {"100000", "99999999999", "-1", "64"}) {
    Sql(path, "UPDATE devices SET idx = " + idx + " WHERE uuid = 'GPU-1aaa'");
    const std::string message = ErrorOf(path);
    EXPECT_THAT(message, HasSubstr("history database '" + path + "'")) << idx;
    EXPECT_THAT(message, HasSubstr("table devices: idx " + idx + " (row id ")) << idx;
    EXPECT_THAT(message, HasSubstr("is outside 0..63")) << idx;
  }
  Sql(path, "UPDATE devices SET idx = 63 WHERE uuid = 'GPU-1aaa'");
  auto highest = Replay(path);
  ASSERT_TRUE(highest) << "63 is a GPU index like any other";
  EXPECT_EQ(highest->DeviceCount(), 64);
  Sql(path, "UPDATE devices SET idx = 1, mig_index = 100000 WHERE uuid = 'GPU-1aaa'");
  EXPECT_THAT(ErrorOf(path), HasSubstr("table devices: mig_index 100000 (row id "));
}

TEST_F(ReplayDir, HistoryMustBeARegularFile) {
  const std::string fifo = File("pipe.db");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ErrorOf(fifo), HasSubstr(fifo + " is a FIFO, not a regular file"));
  auto direct = replay::ReadHistoryRecording(fifo);
  ASSERT_FALSE(direct);
  EXPECT_THAT(direct.error().message(), HasSubstr(fifo + " is a FIFO"));
  EXPECT_THAT(replay::ReadHistoryRecording("/dev/zero").error().message(),
              HasSubstr("/dev/zero is a character device"));
  const std::string link = File("link.db");
  WriteSamples(*Writer(File("real.db")), 0, 2);
  fs::create_symlink(File("real.db"), link);
  auto b = Replay(link);
  ASSERT_TRUE(b) << "a link to a regular file is that file";
  EXPECT_EQ(b->samples(), 2u);
}

}  // namespace
}  // namespace gpuwatch
