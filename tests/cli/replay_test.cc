// `--replay FILE` end to end: every command plays a watch recording (and
// says it is one); watch (and serve) put every recorded sample through the
// pipeline exactly once and in order, at speed 0 and above it, from a JSON
// Lines recording and from a SQLite history, and keep the recorded machine's
// hostname.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../test_dir.h"
#include "cli_util.h"

namespace {
namespace fs = std::filesystem;
using gpuwatch::testing::CmdResult;
using gpuwatch::testing::Gpuwatch;
using gpuwatch::testing::kFixed;
using gpuwatch::testing::Lines;
using gpuwatch::testing::Slurp;
using nlohmann::json;

constexpr std::time_t kT0 = 1795734000;  // the first recorded sample, 1 s apart

std::string Utc(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
  return buf;
}

class CliReplayEverySample : public gpuwatch::testing::TestDir {
 protected:
  // A recording of `n` samples of one H200 from the machine "rec-node-7",
  // one a second; sample i has memory_used_bytes = i.
  fs::path WriteRecording(int n) {
    const fs::path path = dir_ / "rec.jsonl";
    std::ofstream out(path);
    out << json{{"type", "header"},
                {"schema", "gpuwatch.jsonl/1"},
                {"hostname", "rec-node-7"},
                {"demo", false},
                {"host", {{"driver_version", "580.159.04"}}},
                {"devices",
                 {{{"index", 0},
                   {"fields", {{"name", "NVIDIA H200"}, {"memory_total_bytes", 150e9}}}}}}}
               .dump()
        << "\n";
    for (int i = 0; i < n; ++i) {
      out << json{{"type", "sample"},
                  {"time", Utc(kT0 + i)},
                  {"devices",
                   {{{"index", 0},
                     {"health", "ok"},
                     {"fields", {{"memory_used_bytes", i}, {"utilization_gpu_ratio", 0.5}}},
                     {"processes", json::array()}}}}}
                 .dump()
          << "\n";
    }
    return path;
  }

  // The header and sample lines `path` holds; fails the test on any other
  // line order.
  static std::vector<json> Samples(const fs::path& path, std::string* hostname) {
    std::vector<json> samples;
    int headers = 0;
    for (const std::string& line : Lines(Slurp(path))) {
      json j = json::parse(line);
      if (j["type"] == "header") {
        ++headers;
        *hostname = j["hostname"];
      }
      if (j["type"] == "sample") samples.push_back(std::move(j));
    }
    EXPECT_EQ(headers, 1) << path;
    return samples;
  }

  static void ExpectEverySampleOnceInOrder(const std::vector<json>& samples, int n) {
    ASSERT_EQ(samples.size(), static_cast<std::size_t>(n)) << "no gap, no duplicate";
    for (int i = 0; i < n; ++i) {
      const json& s = samples[static_cast<std::size_t>(i)];
      EXPECT_EQ(s["time"], Utc(kT0 + i)) << i;
      EXPECT_EQ(s["sequence"], i + 1) << i;
      EXPECT_EQ(s["devices"][0]["fields"]["memory_used_bytes"], i) << i;
    }
  }
};

TEST_F(CliReplayEverySample, WatchAtSpeedZeroWritesEveryRecordedSampleOnceInOrder) {
  constexpr int kSamples = 500;
  const fs::path rec = WriteRecording(kSamples);
  const fs::path out = dir_ / "out.jsonl";
  const fs::path csv = dir_ / "out.csv";
  const CmdResult r = Gpuwatch("watch --replay " + rec.string() + " --replay-speed 0 -q --jsonl " +
                               out.string() + " --csv " + csv.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("REPLAY of ", 0), 0u) << r.out;
  std::string hostname;
  ExpectEverySampleOnceInOrder(Samples(out, &hostname), kSamples);
  EXPECT_EQ(hostname, "rec-node-7") << "the recorded machine, not this one";
  EXPECT_EQ(Lines(Slurp(csv)).size(), static_cast<std::size_t>(kSamples) + 1) << "header + rows";
}

TEST_F(CliReplayEverySample, WatchAboveSpeedZeroKeepsEverySampleWhateverTheInterval) {
  // 100 s recorded at speed 500: a sample every 2 ms, far inside -i 1s.
  constexpr int kSamples = 100;
  const fs::path rec = WriteRecording(kSamples);
  const fs::path out = dir_ / "out.jsonl";
  const CmdResult r = Gpuwatch("watch --replay " + rec.string() +
                               " --replay-speed 500 -i 1s --color=never --jsonl " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::string hostname;
  ExpectEverySampleOnceInOrder(Samples(out, &hostname), kSamples);
  EXPECT_EQ(hostname, "rec-node-7");
  std::size_t log_lines = 0;
  for (const std::string& line : Lines(r.out))
    log_lines += line.find("] GPU 0: Mem=") != std::string::npos;
  EXPECT_EQ(log_lines, static_cast<std::size_t>(kSamples)) << "one log line per sample";
}

TEST_F(CliReplayEverySample, AHistoryDatabaseReplaysEverySampleToo) {
  constexpr int kSamples = 300;
  const fs::path rec = WriteRecording(kSamples);
  const fs::path db = dir_ / "h.db";
  const CmdResult record =
      Gpuwatch("watch --replay " + rec.string() + " --replay-speed 0 -q --db " + db.string());
  ASSERT_EQ(record.code, 0) << record.err;
  const fs::path out = dir_ / "out.jsonl";
  const CmdResult r =
      Gpuwatch("watch --replay " + db.string() + " --replay-speed 0 -q --jsonl " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::string hostname = "unset";
  ExpectEverySampleOnceInOrder(Samples(out, &hostname), kSamples);
  EXPECT_EQ(hostname, "") << "a history keeps no hostname: not this machine's either";
}

TEST_F(CliReplayEverySample, ServeAtSpeedZeroWritesEveryRecordedSampleOnce) {
  constexpr int kSamples = 200;
  const fs::path rec = WriteRecording(kSamples);
  const fs::path out = dir_ / "out.jsonl";
  // The daemon keeps serving the last sample: stop it once all are written.
  const std::string script =
      "cd " + std::string(GPUWATCH_SOURCE_DIR) + " && (" + GPUWATCH_BINARY_DIR +
      "/gpuwatch serve --replay " + rec.string() +
      " --replay-speed 0 --listen 127.0.0.1:0 --jsonl " + out.string() + " 2>" +
      (dir_ / "log").string() + " & pid=$!; for i in $(seq 600); do n=$(grep -c '\"sample\"' " +
      out.string() + " 2>/dev/null); [ \"${n:-0}\" -ge " + std::to_string(kSamples) +
      " ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done; kill -TERM $pid; wait "
      "$pid)";
  const int status = std::system(script.c_str());
  const std::string log = Slurp(dir_ / "log");
  if (log.find("built without cpp-httplib") != std::string::npos) GTEST_SKIP() << log;
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log;
  std::string hostname;
  ExpectEverySampleOnceInOrder(Samples(out, &hostname), kSamples);
  EXPECT_EQ(hostname, "rec-node-7");
}

// A recording cut off mid-line (the recorder killed, the disk full) still
// replays, with a note naming file:line; what is not a regular file is
// refused at once (exit 2), never read (/dev/zero) or waited on (a FIFO).
TEST_F(CliReplayEverySample, DamagedOrHostileFilesReplayOrFailNamingTheFile) {
  const fs::path rec = WriteRecording(3);
  std::ofstream(rec, std::ios::app) << R"({"type":"sample","time":"2026-11-25T08:2)";
  const fs::path out = dir_ / "out.jsonl";
  const CmdResult r =
      Gpuwatch("watch --replay " + rec.string() + " --replay-speed 0 -q --jsonl " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("gpuwatch: note: " + rec.string() + ":5: the last line is not a whole JSON"),
            std::string::npos)
      << "watch says what it skipped: " << r.err;
  std::string hostname;
  ExpectEverySampleOnceInOrder(Samples(out, &hostname), 3);
  const CmdResult report = Gpuwatch("report " + rec.string() + " -o " + (dir_ / "r.html").string());
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_NE(report.err.find("note: " + rec.string() + ":5: the last line is not a whole JSON"),
            std::string::npos)
      << report.err;

  const fs::path fifo = dir_ / "pipe.jsonl";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo.string()}) {
    for (const std::string& command : {"watch --replay " + path + " -q",
                                       "report " + path + " -o " + (dir_ / "x.html").string()}) {
      const CmdResult bad = Gpuwatch(command);
      EXPECT_EQ(bad.code, 2) << command << ": " << bad.err;
      EXPECT_NE(bad.err.find(path + " is a"), std::string::npos) << command << ": " << bad.err;
      EXPECT_NE(bad.err.find("not a regular file"), std::string::npos) << bad.err;
    }
  }
}

TEST(CliReplay, EveryCommandPlaysAWatchRecording) {
  const fs::path rec =
      fs::temp_directory_path() / ("gw-replay-" + std::to_string(getpid()) + ".jsonl");
  fs::remove(rec);
  ASSERT_EQ(
      Gpuwatch("watch " + kFixed + " -i 50ms --duration 250ms --quiet --jsonl " + rec.string())
          .code,
      0);
  const std::string fields = "index,name,memory.used,utilization.gpu,fan.speed,power.draw";
  const CmdResult live = Gpuwatch("query " + kFixed + " --query-gpu=" + fields + " --format=csv");
  const CmdResult replayed =
      Gpuwatch("query --replay " + rec.string() + " --query-gpu=" + fields + " --format=csv");
  ASSERT_EQ(replayed.code, 0) << replayed.err;
  EXPECT_EQ(replayed.out, live.out) << "the recording gives back what was live";
  // stdout stays pure CSV; stderr says where the numbers come from.
  EXPECT_EQ(replayed.err, "gpuwatch query: note: REPLAY of " + rec.string() +
                              ": recorded GPUs, not this machine's now\n");
  EXPECT_EQ(
      live.err,
      "gpuwatch query: note: DEMO: simulated GPUs (fixed.yaml), not this machine's hardware\n");
  const CmdResult demo = Gpuwatch("--demo query --query-gpu=index --format=csv,noheader");
  ASSERT_EQ(demo.code, 0) << demo.err;
  EXPECT_EQ(demo.out.substr(0, 2), "0\n");
  EXPECT_NE(demo.err.find("gpuwatch query: note: DEMO: simulated GPUs ("), std::string::npos)
      << demo.err;
  const CmdResult status = Gpuwatch("--replay " + rec.string() + " --color=never");
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("REPLAY of " + rec.string()), std::string::npos);
  EXPECT_NE(status.out.find("python train.py --epochs 3"), std::string::npos)
      << "attribution is recorded";
  const CmdResult watch = Gpuwatch("watch --replay " + rec.string() + " --replay-speed 0 -i 10ms");
  EXPECT_EQ(watch.code, 0) << "ends with the recording";
  EXPECT_NE(watch.out.find("GPU 0: Mem=43.1%"), std::string::npos) << watch.out;
  EXPECT_EQ(Gpuwatch("run --replay " + rec.string() + " -- true").code, 2);
  EXPECT_EQ(Gpuwatch("--replay " + rec.string() + " --demo").code, 2);
  fs::remove(rec);
}

}  // namespace
