// Storage faults: a full disk and a writer killed with SIGKILL.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "store/history_writer.h"
#include "store_test_util.h"

namespace gpuwatch::store {
namespace {

using testing::QueryNumber;
using testing::QueryText;
using testing::ScratchDir;

// A snapshot heavy enough that a few of them need new pages: 8 GPUs with
// 8 processes each.
std::shared_ptr<const Snapshot> Heavy(std::int64_t i) {
  auto s = std::make_shared<Snapshot>();
  s->time = testing::At(i * 1000);
  for (int d = 0; d < 8; ++d) {
    DeviceSample dev = testing::MakeDevice(d, static_cast<double>(i));
    dev.fields[FieldId::kUtilizationGpuRatio] = Reading::Number(0.001 * static_cast<double>(i));
    dev.fields[FieldId::kPowerDrawWatts] = Reading::Number(300.5 + static_cast<double>(i));
    for (std::uint32_t p = 0; p < 8; ++p) {
      dev.processes.push_back(testing::MakeProcess(100 + p, static_cast<double>(i)));
    }
    s->devices.push_back(std::move(dev));
  }
  return s;
}

TEST(HistoryFaults, DiskFullWarnsOnceKeepsWhatIsRecordedAndResumes) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  std::atomic<int> warnings{0};
  std::string warning_text;
  auto opened = HistoryWriter::Open(path, {}, [&](const Status& s) {
    ++warnings;
    warning_text = s.message();
  });
  ASSERT_TRUE(opened.has_value()) << opened.status().message();
  HistoryWriter& w = **opened;

  for (int i = 0; i < 10; ++i) w.Append(Heavy(i));
  ASSERT_TRUE(w.Flush().ok());
  // Cap the file at its current size: the next pages cannot be had.
  w.SetMaxDatabaseBytes(std::filesystem::file_size(path));
  int failed_flushes = 0;
  for (int batch = 0; batch < 5; ++batch) {
    for (int i = 0; i < 50; ++i) w.Append(Heavy(100 + batch * 50 + i));
    if (!w.Flush().ok()) ++failed_flushes;
  }
  WriterStats full = w.stats();
  EXPECT_GE(failed_flushes, 3);
  EXPECT_TRUE(full.failing);
  EXPECT_GT(full.snapshots_lost, 0u);
  EXPECT_EQ(full.warnings, 1u);
  EXPECT_EQ(warnings.load(), 1);
  EXPECT_NE(warning_text.find(path), std::string::npos) << warning_text;

  // Space again: writing resumes, nothing earlier went missing.
  w.SetMaxDatabaseBytes(0);
  for (int i = 0; i < 10; ++i) w.Append(Heavy(1000 + i));
  EXPECT_TRUE(w.Flush().ok());
  WriterStats after = w.stats();
  EXPECT_FALSE(after.failing);
  EXPECT_EQ(warnings.load(), 1);
  opened->reset();

  EXPECT_EQ(QueryText(path, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(QueryNumber(path, "SELECT count(DISTINCT ts) FROM device_raw"),
            static_cast<std::int64_t>(after.snapshots_written));
  for (int i : {0, 9, 1000, 1009}) {
    EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_raw WHERE memory_used_bytes = " +
                                    std::to_string(i)),
              8)
        << "snapshot " << i;
  }
}

// The child appends a snapshot every 5 ms (memory_used_bytes = its sequence
// number) and reports (sequence, CLOCK_MONOTONIC ns) after each Append.
[[noreturn]] void WriteUntilKilled(const std::string& path, int report_fd) {
  auto w = HistoryWriter::Open(path);
  if (!w) _exit(3);
  for (std::int64_t seq = 1;; ++seq) {
    (*w)->Append(testing::OneDevice(seq * 5, static_cast<double>(seq)));
    std::int64_t msg[2] = {seq, std::chrono::steady_clock::now().time_since_epoch().count()};
    if (write(report_fd, msg, sizeof msg) != sizeof msg) _exit(4);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(HistoryFaults, KillNineLosesAtMostTheLastBatchAndLeavesAnIntactFile) {
  ScratchDir dir;
  const std::string path = dir.File("h.db");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    WriteUntilKilled(path, fds[1]);
  }
  close(fds[1]);
  std::int64_t msg[2];
  ASSERT_EQ(read(fds[0], msg, sizeof msg), static_cast<ssize_t>(sizeof msg));  // it is running
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  ASSERT_EQ(kill(child, SIGKILL), 0);
  const auto killed_at = std::chrono::steady_clock::now();
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus));

  // Documented loss window: one batch (1 s). Slack: another second.
  const auto must_have_before = killed_at - std::chrono::seconds(2);
  std::int64_t must_have = msg[1] <= must_have_before.time_since_epoch().count() ? msg[0] : 0;
  while (read(fds[0], msg, sizeof msg) == static_cast<ssize_t>(sizeof msg)) {
    if (msg[1] <= must_have_before.time_since_epoch().count()) must_have = msg[0];
  }
  close(fds[0]);
  ASSERT_GT(must_have, 0) << "the child wrote nothing early enough to check";

  EXPECT_EQ(QueryText(path, "PRAGMA integrity_check"), "ok");
  const std::int64_t stored_max =
      QueryNumber(path, "SELECT max(memory_used_bytes) FROM device_raw");
  EXPECT_GE(stored_max, must_have);
  // What is there is a prefix: batches are all or nothing.
  EXPECT_EQ(QueryNumber(path, "SELECT count(*) FROM device_raw"), stored_max);
}

}  // namespace
}  // namespace gpuwatch::store
