// `gpuwatch run` end to end: the fake NVML binds a scripted GPU process to the
// job's real pid (scenario `pid_file`), so following the job, the summary, the
// memory guard, the socket protocol, signals and exit statuses are tested
// without a GPU. When something fails (a disk, the driver, the library, the
// flags): run_faults_test.cc.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_util.h"
#include "run_fixture.h"

namespace {
namespace fs = std::filesystem;
using gpuwatch::run_test::RunFixture;
using gpuwatch::testing::Slurp;

TEST_F(RunFixture, FollowsTheJobAndReportsItsGpuUse) {
  const Out r = Run("--json " + (dir_ / "report.json").string(), Job("exec sleep 1.5"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Report();
  EXPECT_EQ(j["schema"], "gpuwatch.run/1");
  EXPECT_EQ(j["exit_status"], 0);
  ASSERT_EQ(j["gpus"].size(), 1u) << "only GPU 0 ran the job";
  EXPECT_EQ(j["gpus"][0]["gpu"], 0);
  EXPECT_GT(j["gpus"][0]["utilization"]["samples"].get<int>(), 5);
  EXPECT_NEAR(j["gpus"][0]["utilization"]["median"].get<double>(), 0.60, 0.001);
  EXPECT_EQ(j["peak_job_memory_bytes"].get<double>(), 10.0 * (1ull << 30));
  ASSERT_EQ(j["processes"].size(), 1u);
  EXPECT_EQ(std::to_string(j["processes"][0]["pid"].get<int>()) + "\n", Slurp(dir_ / "child.pid"));
  EXPECT_NE(r.err.find("gpuwatch run summary"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("peak 10.00 GiB"), std::string::npos) << r.err;
}

TEST_F(RunFixture, ExitStatusIsTheJobs) {
  EXPECT_EQ(Run("", "sh -c 'exit 7'").code, 7);
  EXPECT_EQ(Run("", "sh -c 'kill -TERM $$'").code, 128 + 15);
  const Out missing = Run("", "/nonexistent/train.py");
  EXPECT_EQ(missing.code, 127);
  EXPECT_NE(missing.err.find("cannot run /nonexistent/train.py"), std::string::npos) << missing.err;
}

TEST_F(RunFixture, ForwardsSignalsToTheJob) {
  // The job traps SIGINT and exits 42; the test signals gpuwatch, not the job
  // (which runs in its own process group).
  std::ofstream(dir_ / "t.sh")
      << "env -u GPUWATCH_FAKE_TIME " << GPUWATCH_BINARY_DIR << "/gpuwatch run --scenario "
      << (dir_ / "job.yaml").string()
      << " -i 50ms --quiet -- sh -c 'trap \"exit 42\" INT; while :; do sleep 0.05; done' &\n"
      << "gw=$!\nsleep 1\nkill -INT $gw\nwait $gw\n";
  const int status = std::system(("sh " + (dir_ / "t.sh").string()).c_str());
  EXPECT_EQ(WEXITSTATUS(status), 42) << "SIGINT reached the job, and its status came back";
}

TEST_F(RunFixture, MemoryLimitWarnsThenTerminatesThenKillsExplainingEachStep) {
  const Out warn = Run("--memory-limit 10.5GiB", Job("exec sleep 0.8"));
  EXPECT_EQ(warn.code, 0) << warn.err;
  EXPECT_NE(warn.err.find("is at 95 % of its --memory-limit"), std::string::npos) << warn.err;
  // A job that ignores SIGTERM is killed after the grace period.
  const Out kill = Run("--memory-limit 9GiB --grace 500ms", Job("trap \"\" TERM; exec sleep 30"));
  EXPECT_EQ(kill.code, 128 + 9) << kill.err;
  EXPECT_NE(kill.err.find("reached its --memory-limit of 9.00 GiB: sending SIGTERM"),
            std::string::npos)
      << kill.err;
  EXPECT_NE(kill.err.find("still running 0 s after SIGTERM: sending SIGKILL"), std::string::npos)
      << kill.err;
  // One that stops on SIGTERM ends with it.
  const Out term = Run("--memory-limit 9GiB --grace 10s", Job("exec sleep 30"));
  EXPECT_EQ(term.code, 128 + 15) << term.err;
}

TEST_F(RunFixture, FrameworkMemoryOfCudaDeviceZeroIsFiledUnderTheGpuItIs) {
  // --gpus 1: the job's CUDA device 0 is NVML's GPU 1.
  const Out r = Run("--gpus 1 --json " + (dir_ / "report.json").string(),
                    Job("job_client \"mem framework=torch device=0 allocated=100 reserved=200\"; "
                        "sleep 0.3"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Report();
  EXPECT_EQ(j["framework_memory"]["1"]["peak"]["reserved"], 200.0) << j["framework_memory"];
  EXPECT_FALSE(j["framework_memory"].contains("0"));
}

// A job started with its own CUDA_VISIBLE_DEVICES (or CUDA's fastest-first
// order) calls NVML's GPU 1 "device 0": the device's UUID names it, so its
// report is filed there; two processes of the job on one GPU are summed
// (each alive for a second before it reports: the job's by then).
TEST_F(RunFixture, FrameworkMemoryNamingItsDevicesUuidIsFiledUnderThatGpu) {
  const Out r = Run("--json " + (dir_ / "report.json").string(),
                    Job("job_client sleep=1000 \"mem framework=torch device=0 "
                        "uuid=11111111-2222-3333-4444-555555555555 allocated=100 reserved=200\" "
                        "sleep=1000 & "
                        "job_client sleep=1000 \"mem framework=torch device=0 "
                        "uuid=GPU-11111111-2222-3333-4444-555555555555 allocated=50 reserved=60\" "
                        "sleep=1000 & "
                        "job_client \"mem framework=torch device=0 uuid=GPU-not-here "
                        "allocated=7 reserved=8\"; wait; sleep 0.3"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Report()["framework_memory"];
  EXPECT_EQ(j["1"]["peak"]["reserved"], 260.0) << j;
  EXPECT_EQ(j["1"]["processes"], 2) << j;
  EXPECT_EQ(j["0"]["peak"]["reserved"], 8.0) << "an unknown UUID: the index, as before; " << j;
}

TEST_F(RunFixture, SocketMarksAndFrameworkMemoryReachTheReport) {
  const Out r = Run(
      "--json " + (dir_ / "report.json").string() + " --jsonl " + (dir_ / "run.jsonl").string(),
      Job("job_client \"hello framework=torch version=2.11\" \"mark step=1\" \"mark step=2\" "
          "\"mem framework=torch device=0 allocated=100 reserved=200\" \"mark phase=eval\" bogus; "
          "sleep 0.5"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Report();
  EXPECT_EQ(j["steps"], 2);
  EXPECT_EQ(j["last_marks"]["phase"], "eval");
  EXPECT_EQ(j["framework_memory"]["0"]["peak"]["reserved"], 200.0);
  EXPECT_EQ(j["framework_memory"]["0"]["framework"], "torch");
  EXPECT_NE(r.err.find("GPUWATCH_SOCKET: line 6 from a client: unknown message \"bogus\""),
            std::string::npos)
      << r.err;
  const std::string jsonl = Slurp(dir_ / "run.jsonl");
  EXPECT_NE(jsonl.find("\"kind\":\"mark\""), std::string::npos);
  EXPECT_NE(jsonl.find("\"message\":\"step 2\""), std::string::npos);
}

TEST_F(RunFixture, TheSummaryNamesEachCounterOnceAndGivesAlertsAndDiagnosesRowsOfTheirOwn) {
  const Out r = Run("--json " + (dir_ / "report.json").string(),
                    Job("job_client \"mem framework=torch device=0 allocated=1073741824 "
                        "peak_allocated=2147483648 reserved=3221225472\"; sleep 0.3"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("\nframework    GPU 0 torch: peak allocated 2.00 GiB, peak reserved "
                       "3.00 GiB\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("peak peak"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\nalerts       0\ndiagnoses    0\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\njob memory   peak 10.00 GiB over all its processes\n"), std::string::npos)
      << r.err;
  const auto j = Report();
  EXPECT_FALSE(j["environment"]["GPUWATCH_SOCKET"].get<std::string>().empty()) << j["environment"];
}

TEST_F(RunFixture, FrameworkMemoryGrowingEveryStepIsALeakInTheSummary) {
  // What gpuwatch.torch.TorchMonitor(every_n_steps=5) sends for a loop that
  // keeps 8 MiB a step: 300 steps in well under a second, too short for any
  // verdict over time, enough for one per step.
  std::string lines;
  for (long long step = 5; step <= 300; step += 5) {
    lines += " \"mem framework=torch device=0 allocated=" +
             std::to_string((1LL << 30) + (8LL << 20) * step) +
             "\" \"mark step=" + std::to_string(step) + "\"";
  }
  const Out r =
      Run("--json " + (dir_ / "report.json").string(), Job("job_client" + lines + "; sleep 0.3"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Report();
  const std::string verdict = j["leak_verdict"];
  EXPECT_EQ(verdict.rfind("leak suspected: torch allocated memory", 0), 0u) << verdict;
  EXPECT_NE(verdict.find("grows 8.0 MiB per step"), std::string::npos) << verdict;
  ASSERT_EQ(j["leaks"].size(), 1u) << j["leaks"];
  EXPECT_EQ(j["leaks"][0]["kind"], "leak");
  EXPECT_NE(r.err.find("leak_suspected"), std::string::npos) << "said while the job ran\n" << r.err;
}

// A data-parallel job's shape on two simulated GPUs (issue 19's DDP check,
// as CI can run it): the job starts two ranks, each a process of its own GPU
// that reports its allocator over the socket naming its device by UUID and
// calling it device 0 (each sees only its own GPU); rank 1 keeps 8 MiB a step.
TEST_F(RunFixture, EachRankOfADataParallelJobIsFiledUnderItsOwnGpuAndOnlyTheLeakingOneIsFlagged) {
  const std::string uuid0 = "GPU-00000000-1111-2222-3333-000000000000";
  const std::string uuid1 = "GPU-00000000-1111-2222-3333-111111111111";
  std::ofstream(dir_ / "job.yaml")
      << "clock: init\ndevices:\n"
      << "  - {name: NVIDIA H200, uuid: " << uuid0
      << ", processes: [{pid_file: " << (dir_ / "rank0.pid").string() << ", memory: 20GiB}]}\n"
      << "  - {name: NVIDIA H200, uuid: " << uuid1
      << ", processes: [{pid_file: " << (dir_ / "rank1.pid").string() << ", memory: 30GiB}]}\n";
  auto rank = [&](int r, long long per_step) {
    std::string lines;
    for (long long step = 5; step <= 300; step += 5) {
      lines += " \\\"mem framework=torch device=0 uuid=" + std::string(r ? uuid1 : uuid0) +
               " allocated=" + std::to_string((4LL << 30) + per_step * step) +
               "\\\" \\\"mark step=" + std::to_string(step) + "\\\"";
    }
    return "sh -c \"echo \\$\\$ > " + (dir_ / ("rank" + std::to_string(r) + ".pid")).string() +
           "; exec job_client sleep=400" + lines + " sleep=400\" &";
  };
  const Out r = Run("--json " + (dir_ / "report.json").string(),
                    "sh -c '" + rank(0, 0) + " " + rank(1, 8LL << 20) + " wait'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto pid_of = [&](int k) {
    return std::stoul(Slurp(dir_ / ("rank" + std::to_string(k) + ".pid")));
  };
  const auto j = Report();
  std::map<unsigned long, int> gpu_of;
  for (const auto& p : j["processes"]) gpu_of[p["pid"].get<unsigned long>()] = p["gpu"];
  EXPECT_EQ(gpu_of[pid_of(0)], 0) << j["processes"];
  EXPECT_EQ(gpu_of[pid_of(1)], 1) << j["processes"];
  EXPECT_EQ(j["framework_memory"]["0"]["processes"], 1) << j["framework_memory"];
  EXPECT_EQ(j["framework_memory"]["1"]["processes"], 1) << j["framework_memory"];
  EXPECT_EQ(j["framework_memory"]["1"]["peak"]["allocated"],
            double((4LL << 30) + (8LL << 20) * 300));
  ASSERT_EQ(j["leaks"].size(), 1u) << j["leaks"];
  EXPECT_EQ(j["leaks"][0]["pid"], pid_of(1)) << j["leaks"];
  EXPECT_EQ(j["leaks"][0]["gpu"], 1) << j["leaks"];
  EXPECT_NE(j["leaks"][0]["message"].get<std::string>().find("8.0 MiB per step"), std::string::npos)
      << j["leaks"];
}

TEST_F(RunFixture, AShortQuietJobIsTooShortForALeakVerdict) {
  const Out r = Run("--json " + (dir_ / "report.json").string(), Job("sleep 0.5"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string verdict = Report()["leak_verdict"];
  EXPECT_EQ(verdict.rfind("too short for a leak verdict: ", 0), 0u) << verdict;
  EXPECT_NE(r.err.find("too short for a leak verdict"), std::string::npos) << r.err;
}

// The report's data, read back from the page (the page itself is checked in a
// real browser by tests/browser/).
nlohmann::json ReportData(const fs::path& html) {
  const std::string page = Slurp(html);
  const std::string open = "id=\"gpuwatch-data\">";
  const auto start = page.find(open);
  if (start == std::string::npos) return nullptr;
  const auto end = page.find("</script>", start);
  return nlohmann::json::parse(page.substr(start + open.size(), end - start - open.size()));
}

TEST_F(RunFixture, ReportHoldsTheJobsChartsMarksAndFrameworkMemory) {
  const Out r = Run("--report " + (dir_ / "job.html").string(),
                    Job("job_client \"mark epoch=1\" sleep=300 \"mem framework=torch device=0 "
                        "allocated=100 reserved=200\" sleep=300; sleep 0.3"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("report       " + (dir_ / "job.html").string()), std::string::npos) << r.err;
  const auto d = ReportData(dir_ / "job.html");
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["schema"], "gpuwatch.report/1");
  EXPECT_EQ(d["source"], "run");
  EXPECT_FALSE(d["demo"].is_null()) << "a scenario is simulated: the report says so";
  EXPECT_GT(d["t"].size(), 5u);
  ASSERT_EQ(d["process_series"].size(), 1u);
  EXPECT_TRUE(d["process_series"][0]["job"].get<bool>());
  EXPECT_EQ(d["process_series"][0]["memory_bytes"].back(), 10.0 * (1ull << 30));
  ASSERT_EQ(d["framework_series"].size(), 2u);
  EXPECT_EQ(d["framework_series"][1]["kind"], "reserved");
  EXPECT_EQ(d["framework_series"][1]["memory_bytes"].back(), 200.0);
  bool epoch = false;
  for (const auto& a : d["annotations"]) epoch = epoch || a["text"] == "epoch 1";
  EXPECT_TRUE(epoch) << d["annotations"].dump();
  EXPECT_EQ(d["job"]["schema"], "gpuwatch.run/1");
  EXPECT_FALSE(fs::exists(dir_ / "job.html.tmp"));
}

TEST_F(RunFixture, GpusSetsCudaVisibleDevicesInPciOrder) {
  const Out r = Run("--gpus 1", "sh -c 'echo \"$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER\" > " +
                                    (dir_ / "env").string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Slurp(dir_ / "env"), "1 PCI_BUS_ID\n");
}

}  // namespace
