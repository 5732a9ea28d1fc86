// A recording damaged while it was written (a disk that fills up mid-line, a
// cut last line, a line cut short in the middle): what survives replays, and
// what does not is skipped with a note naming file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "../transport/file_size_limit.h"
#include "recording_fixture.h"
#include "transport/line_file.h"

namespace gpuwatch {
namespace {
using ::testing::HasSubstr;
using namespace recording_test;

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

}  // namespace
}  // namespace gpuwatch
