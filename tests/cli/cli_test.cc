// The gpuwatch binary end to end against the fake NVML: golden output of
// status, --json and query on fixed scenarios, exit statuses and errors.
// GPUWATCH_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "cli_util.h"

namespace {
namespace fs = std::filesystem;
using gpuwatch::testing::CmdResult;
using gpuwatch::testing::Gpuwatch;
using gpuwatch::testing::kFixed;
using gpuwatch::testing::Lines;
using gpuwatch::testing::Slurp;

// Lines that name this machine or this moment are replaced before comparing.
std::string Normalize(std::string text) {
  text = std::regex_replace(text, std::regex(GPUWATCH_SOURCE_DIR), "<src>");
  text = std::regex_replace(text,
                            std::regex(R"(\n\S+  driver (.*)  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\n)"),
                            "\n<host>  driver $1  <time>\n");
  text = std::regex_replace(text, std::regex(R"(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3})"),
                            "<timestamp>");
  return text;
}

void ExpectGolden(const std::string& name, const std::string& actual) {
  const fs::path path = fs::path(GPUWATCH_SOURCE_DIR) / "tests" / "golden" / name;
  if (const char* update = std::getenv("GPUWATCH_UPDATE_GOLDEN");
      update != nullptr && *update == '1') {
    std::ofstream(path) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << "missing golden file " << path
                                << "; run with GPUWATCH_UPDATE_GOLDEN=1";
  EXPECT_EQ(Slurp(path), actual) << "golden " << name << " differs";
}

TEST(Cli, StatusGoldenOnFixedScenario) {
  const CmdResult r = Gpuwatch(kFixed);
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectGolden("status_fixed.txt", Normalize(r.out));
}

TEST(Cli, CompactStatusGoldenOnFixedScenario) {
  const CmdResult r = Gpuwatch(kFixed + " --compact");
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectGolden("status_compact_fixed.txt", Normalize(r.out));
  const CmdResult both = Gpuwatch(kFixed + " --compact --full");
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("--full"), std::string::npos) << both.err;
}

TEST(Cli, StatusJsonGoldenOnFixedScenario) {
  const CmdResult r = Gpuwatch(kFixed + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "gpuwatch.snapshot/1");
  EXPECT_TRUE(j["demo"].get<bool>());
  j["time"] = "<time>";
  j["hostname"] = "<host>";
  j["source"] = "<source>";
  ExpectGolden("status_fixed.json", j.dump(2) + "\n");
}

TEST(Cli, QueryGpuGoldenMatchesNvidiaSmiSpelling) {
  const std::string fields =
      "index,uuid,name,serial,driver_version,pci.bus_id,pstate,temperature.gpu,temperature.memory,"
      "utilization.gpu,utilization.memory,memory.total,memory.used,memory.free,memory.reserved,"
      "power.draw,"
      "power.limit,enforced.power.limit,clocks.sm,clocks.mem,clocks.gr,fan.speed,display_mode,"
      "display_active,"
      "compute_mode,persistence_mode,ecc.errors.uncorrected.volatile.total,clocks_event_reasons."
      "active,count,"
      "timestamp";
  const CmdResult r = Gpuwatch("query " + kFixed + " --query-gpu=" + fields + " --format=csv");
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectGolden("query_gpu.csv", Normalize(r.out));
  const CmdResult bare =
      Gpuwatch("query " + kFixed + " --query-gpu=" + fields + " --format=csv,noheader,nounits");
  ASSERT_EQ(bare.code, 0) << bare.err;
  ExpectGolden("query_gpu_noheader_nounits.csv", Normalize(bare.out));
}

TEST(Cli, QueryComputeAppsGolden) {
  const CmdResult r = Gpuwatch("query " + kFixed +
                               " --query-compute-apps=pid,process_name,used_memory,gpu_uuid,gpu_"
                               "bus_id,gpu_name --format=csv");
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectGolden("query_apps.csv", r.out);
}

TEST(Cli, UnknownFieldExits2WithNothingOnStdout) {
  const CmdResult r = Gpuwatch("query " + kFixed + " --query-gpu=index,bogus_field --format=csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "Field \"bogus_field\" is not a valid field to query.\n\n");
}

TEST(Cli, UnknownFormatModifierExits2) {
  const CmdResult r = Gpuwatch("query " + kFixed + " --query-gpu=index --format=csv,bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "Format modifier is not recognized.\n");
}

TEST(Cli, IdSelectsByIndexUuidPrefixAndBusId) {
  const std::string q = "query " + kFixed + " --query-gpu=index,name --format=csv,noheader";
  EXPECT_EQ(Gpuwatch(q + " -i 1").out, "1, NVIDIA L40S\n");
  EXPECT_EQ(Gpuwatch(q + " -i GPU-3f1c").out, "1, NVIDIA L40S\n");
  EXPECT_EQ(Gpuwatch(q + " -i 00000000:18:00.0").out, "0, NVIDIA H200\n");
  EXPECT_EQ(Gpuwatch(q + " --id 1,0").out, "1, NVIDIA L40S\n0, NVIDIA H200\n");
  const CmdResult bad = Gpuwatch(q + " -i 7");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("no GPU matches \"7\""), std::string::npos) << bad.err;
}

// A query is a one-shot hot path: it reads what its columns and --id need and
// nothing else. Every other call the backend could make hangs here (a minute),
// so a query that made one would not answer within the timeout.
TEST(Cli, QueryReadsOnlyWhatItsColumnsAndIdNeed) {
  const fs::path scenario =
      fs::temp_directory_path() / ("gw-reads-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(scenario) << "devices:\n  - {name: NVIDIA H200}\n  - {name: NVIDIA L40S}\nfaults:\n"
                             "  - hang: {call: nvmlDeviceGetUUID, ms: 60000}\n"
                             "  - hang: {call: nvmlDeviceGetPciInfo_v3, ms: 60000}\n"
                             "  - hang: {call: nvmlDeviceGetMigMode, ms: 60000}\n"
                             "  - hang: {call: nvmlDeviceGetPowerUsage, ms: 60000}\n";
  const std::string gpuwatch = "timeout 30 " + std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch";
  const std::string q =
      "query --scenario " + scenario.string() + " --query-gpu=index,name --format=csv,noheader";
  const CmdResult all = gpuwatch::testing::RunBinary(gpuwatch, q);
  EXPECT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(all.out, "0, NVIDIA H200\n1, NVIDIA L40S\n");
  // Indices alone need neither the UUID nor the PCI bus id.
  const CmdResult one = gpuwatch::testing::RunBinary(gpuwatch, q + " --id 1");
  EXPECT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out, "1, NVIDIA L40S\n");
  fs::remove(scenario);
}

TEST(Cli, LoopRepeatsUntilInterrupted) {
  const fs::path out = fs::temp_directory_path() / ("gw-loop-" + std::to_string(getpid()));
  const std::string cmd = "cd " + std::string(GPUWATCH_SOURCE_DIR) +
                          " && GPUWATCH_FAKE_TIME=100 timeout --preserve-status -s INT 1 " +
                          GPUWATCH_BINARY_DIR + "/gpuwatch query " + kFixed +
                          " --query-gpu=index --format=csv -lms 200 >" + out.string();
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0) << "Ctrl-C ends the loop cleanly";
  const std::string text = Slurp(out);
  fs::remove(out);
  EXPECT_EQ(text.rfind("index\n", 0), 0u) << "one header: " << text;
  EXPECT_EQ(text.find("index", 1), std::string::npos) << "header printed once";
  const auto rows = std::count(text.begin(), text.end(), '\n') - 1;
  EXPECT_GE(rows, 6) << text;  // 2 GPUs x at least 3 rounds
}

TEST(Cli, LoopIntervalMustBeAFinitePositiveDuration) {
  // `timeout`: these once reached an undefined double-to-integer cast and
  // printed rows as fast as it could, forever.
  const std::pair<std::string, std::string> cases[] = {
      {"-l nan", "-l/--loop: \"nan\" is not a duration"},
      {"-l inf", "-l/--loop: \"inf\" is not a duration"},
      {"--loop=1e300", "-l/--loop: \"1e300\" is not a duration"},
      {"-l 0", "-l/--loop \"0\": the interval must be more than 0"},
      {"-l 400d", "-l/--loop: \"400d\" is too long"},
      {"-lms 0", "--loop-ms 0: expected 1 to 31536000000 milliseconds"},
      {"-lms 99999999999999999", "--loop-ms 99999999999999999: expected 1 to"},
  };
  for (const auto& [loop, why] : cases) {
    const CmdResult r =
        Gpuwatch("query " + kFixed + " --query-gpu=index --format=csv " + loop, "timeout 10");
    EXPECT_EQ(r.code, 2) << loop << ": " << r.err;
    EXPECT_EQ(r.out, "") << loop;
    EXPECT_NE(r.err.find("gpuwatch query: " + why), std::string::npos) << loop << ": " << r.err;
  }
}

TEST(Cli, EmptyFieldListIsAUsageErrorNamingTheFlag) {
  for (const std::string flag : {"--query-gpu", "--query-compute-apps"}) {
    // Not "Field \"--format=csv\" is not a valid field": the next argument is not the value.
    const CmdResult eq = Gpuwatch("query " + kFixed + " " + flag + "= --format=csv");
    EXPECT_EQ(eq.code, 2) << flag;
    EXPECT_EQ(eq.out, "");
    EXPECT_EQ(eq.err, "gpuwatch: " + flag + "= is empty: give its value after the '='\n");
    const CmdResult space = Gpuwatch("query " + kFixed + " " + flag + " '' --format=csv");
    EXPECT_EQ(space.code, 2) << flag;
    EXPECT_EQ(space.err.rfind("gpuwatch query: " + flag + " is empty: name the fields to query", 0),
              0u)
        << space.err;
  }
}

TEST(Cli, OnlyRunTakesACommandAfterDashDash) {
  const CmdResult r = Gpuwatch("query " + kFixed + " --query-gpu=index -- ls -l");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "gpuwatch: only `gpuwatch run` and `gpuwatch sweep` take a command after --\n");
}

TEST(Cli, ControlCharactersOfProcessesNeverReachTheTerminal) {
  // The fixed scenario, with ESC sequences and a newline in the command line
  // of its process 5001 (the host tree next to a scenario is its /proc).
  const fs::path dir = fs::temp_directory_path() / ("gw-ctl-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path fixed = fs::path(GPUWATCH_SOURCE_DIR) / "scenarios" / "test";
  fs::copy(fixed / "fixed.yaml", dir / "ctl.yaml");
  fs::copy(fixed / "fixed.host", dir / "ctl.host", fs::copy_options::recursive);
  const std::string cmdline("\x1b]0;owned\x07py\nthon\0train.py\0\x1b[2J\0", 32);
  std::ofstream(dir / "ctl.host" / "proc" / "5001" / "cmdline", std::ios::trunc) << cmdline;
  const std::string scenario = "--scenario " + (dir / "ctl.yaml").string() + " --color=never";

  const CmdResult q = Gpuwatch("query " + scenario +
                               " --query-compute-apps=pid,process_name --format=csv,noheader");
  ASSERT_EQ(q.code, 0) << q.err;
  EXPECT_NE(q.out.find("5001, \\x1b]0;owned\\x07py\\nthon\n"), std::string::npos) << q.out;
  EXPECT_EQ(q.out.find('\x1b'), std::string::npos) << q.out;

  std::ofstream(dir / "rules.yaml")
      << "rules:\n  - name: who\n    scope: process\n    condition: used_memory_bytes > 0\n"
         "    message: \"pid {pid}: {command}\"\n";
  const CmdResult w = Gpuwatch("watch " + scenario + " -i 50ms --duration 200ms --rules " +
                               (dir / "rules.yaml").string());
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_NE(w.out.find("ALERT warning who: pid 5001: \\x1b]0;owned\\x07py\\nthon train.py "
                       "\\x1b[2J\n"),
            std::string::npos)
      << w.out;
  EXPECT_EQ(w.out.find('\x1b'), std::string::npos) << w.out;
  for (const std::string& line : Lines(w.out)) {
    EXPECT_EQ(line.rfind("thon", 0), std::string::npos) << "a forged line: " << line;
  }
  fs::remove_all(dir);
}

TEST(Cli, NoDriverFailsWithTheReasonAndTheWayOut) {
  const CmdResult r =
      Gpuwatch("--color=never", "GPUWATCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "") << "no simulated data without --demo";
  EXPECT_NE(r.err.find("NVML library not found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpuwatch doctor"), std::string::npos);
  EXPECT_NE(r.err.find("--demo"), std::string::npos);
}

TEST(Cli, TheDemoRunShowsTheJobsOwnProcess) {
  const fs::path pid_file =
      fs::temp_directory_path() / ("gw-demo-run-" + std::to_string(getpid()) + ".pid");
  const CmdResult r = Gpuwatch("run --demo --color=never -- sh -c 'echo $$ > " + pid_file.string() +
                               "; exec sleep 3'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string pid = Slurp(pid_file);
  fs::remove(pid_file);
  ASSERT_FALSE(pid.empty());
  EXPECT_EQ(r.err.find("no process of the job used a GPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPU 7        peak memory"), std::string::npos) << r.err;
  const std::regex job_line("\\n +pid +" + pid.substr(0, pid.find('\n')) + "  GPU 7  peak ");
  EXPECT_TRUE(std::regex_search(r.err, job_line)) << "the job's own pid, on the demo's GPU 7:\n"
                                                  << r.err;
}

TEST(Cli, LostGpuIsShownWhileTheOthersReport) {
  const CmdResult r =
      Gpuwatch("--scenario scenarios/test/lost.yaml --color=never", "GPUWATCH_FAKE_TIME=15");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU 1"), std::string::npos);
  EXPECT_NE(r.out.find("LOST: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("util  70%"), std::string::npos) << "GPU 2 still reports: " << r.out;
  const CmdResult q = Gpuwatch(
      "query --scenario scenarios/test/lost.yaml --query-gpu=index,utilization.gpu "
      "--format=csv,noheader",
      "GPUWATCH_FAKE_TIME=15");
  EXPECT_EQ(q.out, "0, 50 %\n1, [GPU is lost]\n2, 70 %\n");
}

TEST(Cli, DemoFleetIsLabelledAndAttributed) {
  const CmdResult r = Gpuwatch("--demo --color=never");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("DEMO", 0), 0u);
  for (const char* want :
       {"alice", "bob", "slurm 88123", "docker", "podman", "MIG", "NVIDIA A100-SXM4-80GB",
        "NVIDIA L40S", "clocks held down: sw thermal slowdown, hw thermal slowdown"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

TEST(Cli, HelpQueryGpuListsFields) {
  const CmdResult r = Gpuwatch("query --help-query-gpu");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\"memory.used\""), std::string::npos);
}

TEST(Cli, BadOptionValueIsAUsageError) {
  const CmdResult r = Gpuwatch("--color=sometimes");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--color"), std::string::npos) << r.err;
}

TEST(Cli, VersionAnswersToDashVDashDashVersionAndTheVersionCommand) {
  for (const char* args : {"-V", "--version", "version"}) {
    const CmdResult r = Gpuwatch(args);
    EXPECT_EQ(r.code, 0) << args << ": " << r.err;
    EXPECT_EQ(r.out, std::string("gpuwatch ") + GPUWATCH_VERSION + "\n") << args;
  }
  EXPECT_EQ(Gpuwatch("version --x").code, 2);
}

TEST(CliReport, FromARecordingAndBadInput) {
  const fs::path dir = fs::temp_directory_path() / ("gw-report-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path rec = dir / "rec.jsonl";
  ASSERT_EQ(
      Gpuwatch("watch " + kFixed + " -i 50ms --duration 300ms --quiet --jsonl " + rec.string())
          .code,
      0);
  const CmdResult ok = Gpuwatch("report " + rec.string() + " -o " + (dir / "r.html").string());
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.err.find("wrote " + (dir / "r.html").string()), std::string::npos) << ok.err;
  const std::string page = Slurp(dir / "r.html");
  EXPECT_NE(page.find("\"source\":\"recording " + rec.string() + "\""), std::string::npos);
  EXPECT_NE(page.find("python train.py --epochs 3"), std::string::npos) << "processes are charted";
  // Without -o: beside the recording, .html for its extension; never over the recording itself.
  const CmdResult named = Gpuwatch("report " + rec.string());
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_NE(named.err.find("wrote " + (dir / "rec.html").string()), std::string::npos) << named.err;
  EXPECT_EQ(Slurp(dir / "rec.html").substr(0, 15), page.substr(0, 15));
  fs::copy_file(rec, dir / "odd.html");
  ASSERT_EQ(Gpuwatch("report " + (dir / "odd.html").string()).code, 0);
  EXPECT_EQ(Slurp(dir / "odd.html"), Slurp(rec)) << "the recording is never overwritten";
  EXPECT_TRUE(fs::exists(dir / "odd.html.report.html"));

  struct Case {
    std::string args;
    int code;
    std::string why;
  };
  const Case cases[] = {
      {"report -o x.html", 2, "source is required"},
      {"report /nonexistent.jsonl -o " + (dir / "x.html").string(), 1,
       "cannot read the recording /nonexistent.jsonl"},
      {"report " + rec.string() + " -o /nonexistent-dir/r.html", 2,
       "-o: cannot write /nonexistent-dir/r.html"},
      {"report " + kFixed + " " + rec.string() + " -o " + (dir / "x.html").string(), 2,
       "the recording is SOURCE"},
  };
  for (const auto& c : cases) {
    const CmdResult r = Gpuwatch(c.args);
    EXPECT_EQ(r.code, c.code) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.why), std::string::npos) << c.args << ": " << r.err;
  }
  std::ofstream(dir / "bad.jsonl") << "{\"type\":\"header\",\"schema\":\"gpuwatch.jsonl/9\"}\n";
  const CmdResult bad =
      Gpuwatch("report " + (dir / "bad.jsonl").string() + " -o " + (dir / "x.html").string());
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("bad.jsonl:1: schema \"gpuwatch.jsonl/9\""), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir / "x.html")) << "no report from bad input";
  fs::remove_all(dir);
}

}  // namespace
