// `gpuwatch watch` end to end against the fake NVML: outputs, Ctrl-C, rules,
// device events (a lost GPU, XID errors) and kill -9 while writing SQLite.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"

namespace {
namespace fs = std::filesystem;
using gpuwatch::testing::CmdResult;
using gpuwatch::testing::Gpuwatch;
using gpuwatch::testing::kFixed;
using gpuwatch::testing::Lines;
using gpuwatch::testing::Slurp;

TEST(CliWatch, WritesCsvAndJsonLinesForADuration) {
  const fs::path dir = fs::temp_directory_path() / ("gw-watch-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const CmdResult r = Gpuwatch("watch " + kFixed + " -i 50ms --duration 400ms --quiet --csv " +
                               (dir / "a.csv").string() + " --jsonl " + (dir / "a.jsonl").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("DEMO", 0), 0u);
  EXPECT_EQ(r.out.find("GPU 0: Mem="), std::string::npos) << "--quiet";
  const auto csv = Lines(Slurp(dir / "a.csv"));
  ASSERT_GE(csv.size(), 5u) << "header + 2 GPUs x at least 2 samples";
  EXPECT_EQ(csv[0].rfind("time,sequence,gpu,uuid,", 0), 0u);
  EXPECT_NE(csv[1].find(",0,GPU-ba5eb01e-1a44-0730-738a-4f10e71191a1,"), std::string::npos)
      << csv[1];
  const auto jsonl = Lines(Slurp(dir / "a.jsonl"));
  ASSERT_GE(jsonl.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(jsonl[0])["type"], "header");
  EXPECT_EQ(nlohmann::json::parse(jsonl[1])["type"], "sample");
  EXPECT_EQ(nlohmann::json::parse(jsonl[1])["devices"][0]["fields"]["memory_used_bytes"],
            64961380352);
  fs::remove_all(dir);
}

TEST(CliWatch, CtrlCFlushesEveryOutput) {
  const fs::path csv =
      fs::temp_directory_path() / ("gw-watch-int-" + std::to_string(getpid()) + ".csv");
  const std::string cmd = "cd " + std::string(GPUWATCH_SOURCE_DIR) +
                          " && GPUWATCH_FAKE_TIME=100 timeout --preserve-status -s INT 0.6 " +
                          GPUWATCH_BINARY_DIR + "/gpuwatch watch " + kFixed +
                          " -i 20ms --quiet --csv " + csv.string() + " >/dev/null";
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const auto rows = Lines(Slurp(csv));
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows.size() % 2, 1u) << "header plus whole samples (2 GPUs each)";
  for (const auto& row : rows)
    EXPECT_EQ(std::count(row.begin(), row.end(), ','),
              std::count(rows[0].begin(), rows[0].end(), ','));
  fs::remove(csv);
}

TEST(CliWatch, PrintsLogLinesAndDeviceEvents) {
  const CmdResult r =
      Gpuwatch("watch --scenario scenarios/test/lost.yaml --color=never -i 50ms --duration 180ms",
               "GPUWATCH_FAKE_TIME=15");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU 0: Mem="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU 1: LOST"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device_lost sampler GPU 1: GPU 1 lost"), std::string::npos) << r.out;
}

TEST(CliWatch, QuietLeavesTheEventsAndColourMarksThem) {
  const std::string cmd = "watch --scenario scenarios/test/lost.yaml -q -i 50ms --duration 180ms";
  const CmdResult coloured = Gpuwatch(cmd + " --color=always", "GPUWATCH_FAKE_TIME=15");
  ASSERT_EQ(coloured.code, 0) << coloured.err;
  EXPECT_EQ(coloured.out.find("GPU 0: Mem="), std::string::npos) << "--quiet: no sample lines";
  EXPECT_NE(coloured.out.find("\033[1;31m["), std::string::npos) << coloured.out;
  EXPECT_NE(coloured.out.find("device_lost sampler GPU 1: GPU 1 lost"), std::string::npos)
      << coloured.out;
  const CmdResult plain = Gpuwatch(cmd + " --color=never", "GPUWATCH_FAKE_TIME=15");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find("device_lost sampler GPU 1: GPU 1 lost"), std::string::npos);
  EXPECT_EQ(plain.out.find('\033'), std::string::npos) << plain.out;
  // Not a terminal: auto is plain too.
  const CmdResult piped = Gpuwatch(cmd, "GPUWATCH_FAKE_TIME=15");
  EXPECT_EQ(piped.out.find('\033'), std::string::npos) << piped.out;
}

TEST(CliWatch, RulesFireOnceAndGoToEveryOutput) {
  const fs::path dir = fs::temp_directory_path() / ("gw-rules-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "rules.yaml")
      << "rules:\n  - name: warm\n    condition: temperature_gpu_celsius > 60C\n"
         "    severity: warning\n    message: \"GPU {gpu} at {value}\"\n";
  const CmdResult r =
      Gpuwatch("watch " + kFixed + " -i 50ms --duration 300ms --rules " +
               (dir / "rules.yaml").string() + " --jsonl " + (dir / "e.jsonl").string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto first = r.out.find("ALERT warning warm: GPU 0 at 61");
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ALERT warning warm", first + 1), std::string::npos)
      << "fires once, not every sample";
  EXPECT_EQ(r.out.find("GPU 1 at"), std::string::npos) << "the L40S is at 52 C";
  EXPECT_NE(Slurp(dir / "e.jsonl").find("\"kind\":\"alert_firing\",\"message\":\"GPU 0 at 61"),
            std::string::npos);
  const CmdResult bad = Gpuwatch("watch " + kFixed + " --rules " + (dir / "missing.yaml").string());
  EXPECT_EQ(bad.code, 2);
  fs::remove_all(dir);
}

TEST(CliWatch, KillNineWhileRecordingLeavesAnIntactDatabase) {
  const fs::path db = fs::temp_directory_path() / ("gw-kill9-" + std::to_string(getpid()) + ".db");
  fs::remove(db);
  const std::string cmd =
      "cd " + std::string(GPUWATCH_SOURCE_DIR) + " && (GPUWATCH_FAKE_TIME=100 " +
      GPUWATCH_BINARY_DIR + "/gpuwatch watch " + kFixed + " -i 50ms --quiet --db " + db.string() +
      " >/dev/null 2>&1 & pid=$!; sleep 2.5; kill -9 $pid; wait $pid) >/dev/null 2>&1";
  ASSERT_NE(std::system(cmd.c_str()), -1);
  const fs::path out = db.string() + ".txt";
  const std::string check = "sqlite3 " + db.string() +
                            " 'PRAGMA integrity_check; SELECT count(*) FROM device_raw;' > " +
                            out.string() + " 2>&1";
  ASSERT_EQ(std::system(check.c_str()), 0);
  const auto lines = Lines(Slurp(out));
  ASSERT_EQ(lines.size(), 2u) << Slurp(out);
  EXPECT_EQ(lines[0], "ok");
  EXPECT_GE(std::stoi(lines[1]), 10) << "samples up to the last committed batch are kept";
  fs::remove(db);
  fs::remove(out);
  fs::remove(db.string() + "-wal");
  fs::remove(db.string() + "-shm");
}

TEST(CliWatch, XidEventsRaiseTheBuiltInAlertAndAreRecorded) {
  const fs::path jsonl =
      fs::temp_directory_path() / ("gw-xid-" + std::to_string(getpid()) + ".jsonl");
  // Scenario time runs (no frozen time): the XIDs come 0.6 s and 0.8 s in.
  const CmdResult r = Gpuwatch(
      "watch --scenario scenarios/test/xid.yaml --color=never -i 100ms "
      "--duration 1500ms --jsonl " +
          jsonl.string(),
      "GPUWATCH_FAKE_TIME=");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto alert = r.out.find("ALERT critical gpu_xid: GPU 0: ");
  ASSERT_NE(alert, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("new XID error(s), the latest XID ", alert), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("gpu_xid: GPU 1"), std::string::npos) << "GPU 1 had none";
  const std::vector<std::string> lines = Lines(Slurp(jsonl));
  ASSERT_GE(lines.size(), 3u);
  nlohmann::json sample;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    sample = nlohmann::json::parse(*it);
    if (sample["type"] == "sample") break;
  }
  ASSERT_EQ(sample["type"], "sample");
  EXPECT_EQ(sample["devices"][0]["fields"]["xid_errors_total"], 2);
  EXPECT_EQ(sample["devices"][0]["fields"]["xid_last"], 94);
  EXPECT_EQ(sample["devices"][1]["fields"]["xid_errors_total"], 0);
  fs::remove(jsonl);
}

TEST(CliWatch, ARuleFileIsOneDocumentInARegularFile) {
  const fs::path dir = fs::temp_directory_path() / ("gw-rulefile-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "two.yaml")
      << "rules:\n  - name: a\n    condition: memory_used_ratio > 0.9\n"
         "---\nrules:\n  - name: b\n    condition: memory_used_ratio > 0.5\n";
  const std::pair<std::string, std::string> cases[] = {
      {(dir / "two.yaml").string(),  // the second document's rules were silently dropped
       (dir / "two.yaml").string() + ":4:1: a second YAML document ('---')"},
      {dir.string(), dir.string() + " is a directory, not a regular file"},  // "empty rule file"
      {"/dev/zero", "/dev/zero is a character device, not a regular file"},  // never ended
  };
  for (const auto& [rules, why] : cases) {
    const CmdResult r = Gpuwatch("watch " + kFixed + " --duration 100ms --rules " + rules);
    EXPECT_EQ(r.code, 2) << rules;
    EXPECT_EQ(r.err.rfind("gpuwatch watch: --rules: " + why, 0), 0u) << r.err;
    EXPECT_EQ(r.out, "") << "nothing sampled";
  }
  fs::remove_all(dir);
}

TEST(CliWatch, BadOptionsFailBeforeSampling) {
  const CmdResult interval = Gpuwatch("watch " + kFixed + " -i 5parsecs");
  EXPECT_EQ(interval.code, 2);
  EXPECT_NE(interval.err.find("--interval: \"5parsecs\" is not a duration"), std::string::npos)
      << interval.err;
  const CmdResult tiny = Gpuwatch("watch " + kFixed + " -i 1ms");
  EXPECT_EQ(tiny.code, 2);
  const CmdResult path = Gpuwatch("watch " + kFixed + " --csv /nonexistent-dir/x.csv");
  EXPECT_EQ(path.code, 2);
  EXPECT_NE(path.err.find("cannot write /nonexistent-dir/x.csv"), std::string::npos) << path.err;
  EXPECT_EQ(path.out, "") << "nothing sampled";
}

}  // namespace
