// `gpuwatch sweep` end to end on the fake NVML: scenarios/sweep.yaml binds
// each run of gpuwatch-demo-trainer to a process of 2 GiB + 48 MiB per
// sample, refused beyond the H200's memory, so the fit, the search, the
// out-of-memory boundary, concurrency and the bad inputs are tested without
// a GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_util.h"

namespace {
namespace fs = std::filesystem;
using gpuwatch::testing::Slurp;

class Sweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gw-sweep-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  struct Out {
    int code = -1;
    std::string out, err;
  };
  // `source`: --scenario FILE or --demo.
  Out Run(const std::string& options, const std::string& trainer_args = "--batch {bs}",
          const std::string& source = std::string("--scenario ") + GPUWATCH_SOURCE_DIR +
                                      "/scenarios/sweep.yaml") const {
    const std::string bin = GPUWATCH_BINARY_DIR;
    const std::string cmd = "cd " + dir_.string() + " && env -u GPUWATCH_FAKE_TIME " +
                            "GPUWATCH_RUNTIME_DIR=" + dir_.string() + " " + bin +
                            "/gpuwatch sweep " + source + " " +
                            (options.find("--steps") == std::string::npos ? "--steps 5 " : "") +
                            options + " -- " + bin + "/gpuwatch-demo-trainer " + trainer_args +
                            " >" + (dir_ / "out").string() + " 2>" + (dir_ / "err").string();
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(dir_ / "out"), Slurp(dir_ / "err")};
  }
  nlohmann::json Json(const Out& r) const { return nlohmann::json::parse(r.out); }
  fs::path dir_;
};

constexpr double kMiB = 1024.0 * 1024;
constexpr double kGiB = 1024 * kMiB;

// The search brackets the real boundary (the largest batch that fits) to 1 %
// of it (sweep_search.h Resolved).
void ExpectBoundaryToOnePercent(const nlohmann::json& j, long boundary) {
  const long fit = j["boundary"]["largest_fit"].get<long>();
  const long oom = j["boundary"]["smallest_oom"].get<long>();
  EXPECT_LE(fit, boundary) << j["boundary"].dump();
  EXPECT_GT(oom, boundary) << j["boundary"].dump();
  EXPECT_LE(oom - fit, std::max(1L, fit / 100)) << j["boundary"].dump();
}

TEST_F(Sweep, ValuesGiveALinearFitAndTheLargestBatchUnderTheMargin) {
  const Out r = Run("--values 8,16,32,64 --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Json(r);
  EXPECT_EQ(j["schema"], "gpuwatch.sweep/1");
  ASSERT_EQ(j["runs"].size(), 4u);
  for (const auto& run : j["runs"]) {
    EXPECT_EQ(run["result"], "fits") << run.dump();
    const double v = run["value"].get<double>();
    EXPECT_EQ(run["peak_process_memory_bytes"].get<double>(), 2 * kGiB + 48 * kMiB * v);
    EXPECT_GE(run["per_copy"][0]["steps"].get<int>(), 5);
    EXPECT_GT(run["per_copy"][0]["framework_reserved_bytes"].get<double>(), 0);
  }
  EXPECT_EQ(j["fit"]["verdict"], "linear");
  EXPECT_NEAR(j["fit"]["b_bytes_per_value"].get<double>(), 48 * kMiB, 1);
  // (0.9 * free - 2 GiB) / 48 MiB.
  const double free = j["free_memory_bytes"].get<double>();
  EXPECT_EQ(j["largest_fitting"]["value"].get<long>(),
            static_cast<long>((0.9 * free - 2 * kGiB) / (48 * kMiB)));
  EXPECT_NE(r.err.find("bs 8: fits"), std::string::npos) << "progress on stderr: " << r.err;
}

// Without --values: 8 and 16, then two runs the fit of the runs before
// places at an eighth and a quarter of its largest batch (the scenario's
// H200: (free - 2 GiB) / 48 MiB), in multiples of 8.
TEST_F(Sweep, WithoutValuesTheThirdAndFourthRunsArePlacedByTheFit) {
  const Out r = Run("--json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Json(r);
  ASSERT_EQ(j["runs"].size(), 4u) << j["runs"].dump();
  const double free = j["free_memory_bytes"].get<double>();
  const long edge = static_cast<long>((free - 2 * kGiB) / (48 * kMiB));
  EXPECT_EQ(j["runs"][0]["value"], 8);
  EXPECT_EQ(j["runs"][1]["value"], 16);
  EXPECT_EQ(j["runs"][2]["value"].get<long>(), edge / 8 / 8 * 8);
  EXPECT_EQ(j["runs"][3]["value"].get<long>(), edge / 4 / 8 * 8);
  EXPECT_EQ(j["largest_fitting"]["value"].get<long>(),
            static_cast<long>((0.9 * free - 2 * kGiB) / (48 * kMiB)));
}

TEST_F(Sweep, TheTableNamesTheVerdictAndTheLargestBatch) {
  const Out r = Run("--values 8,16,32 --margin 20%");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("DEMO gpuwatch sweep:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory: linear: 2.00 GiB + 48.00 MiB*bs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("less 20 %"), std::string::npos) << r.out;
}

TEST_F(Sweep, SearchFindsTheBoundaryToOnePercentInFewerTrialsThanDoubling) {
  const Out r = Run("--values 8,16,32 --search --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Json(r);
  ASSERT_TRUE(j["boundary"]["found"].get<bool>()) << j.dump(1);
  const double free = j["free_memory_bytes"].get<double>();
  const long boundary = static_cast<long>((free - 2 * kGiB) / (48 * kMiB));
  ExpectBoundaryToOnePercent(j, boundary);
  EXPECT_LT(j["boundary"]["trials"].get<int>(),
            j["boundary"]["doubling_bisection_trials"].get<int>());
}

// --bisect, --search's baseline, doubles from 8 and bisects without the fit:
// it makes as many runs as --search said doubling + bisection would, and finds
// the same boundary.
TEST_F(Sweep, BisectDoublesFromEightThenBisectsAsSearchCountsIt) {
  const auto search = Json(Run("--values 8,16,32 --search --json -"));
  const Out r = Run("--bisect --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Json(r);
  EXPECT_EQ(j["mode"], "bisect");
  ASSERT_TRUE(j["boundary"]["found"].get<bool>()) << j.dump(1);
  const long boundary =
      static_cast<long>((j["free_memory_bytes"].get<double>() - 2 * kGiB) / (48 * kMiB));
  ExpectBoundaryToOnePercent(j, boundary);
  EXPECT_EQ(j["boundary"]["trials"].get<int>(),
            search["boundary"]["doubling_bisection_trials"].get<int>());
  EXPECT_TRUE(j["boundary"]["doubling_bisection_trials"].is_null());
  // Doubling from 8 up to the first out-of-memory, then every run inside the
  // bracket of the runs before it.
  const auto& runs = j["runs"];
  long value = 8, lo = 0, hi = 0;
  std::size_t i = 0;
  for (; i < runs.size() && runs[i]["result"] == "fits"; ++i, value *= 2) {
    EXPECT_EQ(runs[i]["value"].get<long>(), value) << runs.dump();
    lo = value;
  }
  ASSERT_LT(i, runs.size());
  EXPECT_EQ(runs[i]["value"].get<long>(), value) << runs.dump();
  hi = value;
  for (++i; i < runs.size(); ++i) {
    const long v = runs[i]["value"].get<long>();
    EXPECT_EQ(v, lo + (hi - lo) / 2) << runs.dump();
    (runs[i]["result"] == "fits" ? lo : hi) = v;
  }
  EXPECT_NE(Run("--bisect").out.find("trials by doubling + bisection"), std::string::npos);
}

// A job whose caching allocator frees its cache short of memory (10 % of
// what NVML shows with room to spare): fitting NVML's memory would predict
// 10 % short of the boundary; the fit of what each run needs lands on it.
TEST_F(Sweep, TheFitOfWhatRunsNeedPredictsTheBoundaryOfAJobThatFreesItsCache) {
  const Out r = Run("--search --json -", "--batch {bs} --cache 0.1");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Json(r);
  ASSERT_TRUE(j["boundary"]["found"].get<bool>()) << j.dump(1);
  EXPECT_EQ(j["fit"]["measure"], "needed") << j["fit"].dump();
  // Needed: 0.9 * (2 GiB + 48 MiB * bs).
  EXPECT_NEAR(j["fit"]["b_bytes_per_value"].get<double>(), 0.9 * 48 * kMiB, 1);
  EXPECT_NEAR(j["runs"][0]["needed_memory_bytes"].get<double>(), 0.9 * (2 * kGiB + 8 * 48 * kMiB),
              2);
  const double free = j["free_memory_bytes"].get<double>();
  const long boundary = static_cast<long>((free / 0.9 - 2 * kGiB) / (48 * kMiB));
  ExpectBoundaryToOnePercent(j, boundary);
  // The first value past the 4 small runs is the prediction, and it fits.
  ASSERT_GT(j["runs"].size(), 4u);
  EXPECT_EQ(j["runs"][4]["result"], "fits") << j["runs"][4].dump();
  EXPECT_GE(j["runs"][4]["value"].get<long>(), boundary - boundary / 100) << j["runs"].dump();
  EXPECT_EQ(j["largest_fitting"]["value"].get<long>(),
            static_cast<long>((0.9 * free - 0.9 * 2 * kGiB) / (0.9 * 48 * kMiB)));
}

TEST_F(Sweep, UntilOomDoublesToTheFirstFailureAndSaysSoFromStderr) {
  const Out r = Run("--values 400 --until-oom --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Json(r);
  EXPECT_EQ(j["boundary"]["largest_fit"], 1600);
  EXPECT_EQ(j["boundary"]["smallest_oom"], 3200);
  EXPECT_EQ(j["boundary"]["configured"], 400);
  const auto& last = j["runs"].back();
  EXPECT_EQ(last["result"], "oom");
  EXPECT_NE(last["reason"].get<std::string>().find("CUDA out of memory"), std::string::npos);
}

TEST_F(Sweep, ConcurrencyStopsWhereTotalThroughputStopsGrowing) {
  const Out r =
      Run("--values 500 --concurrency 1,2,3 --steps 20 --json -", "--batch {bs} --saturate 2");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Json(r);
  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["runs"][2]["per_copy"].size(), 3u);
  EXPECT_EQ(j["concurrency"]["holds"], 2) << j["concurrency"].dump();
  EXPECT_NE(j["concurrency"]["reason"].get<std::string>().find("stops growing"), std::string::npos);
}

TEST_F(Sweep, ConcurrencyEndsWhereMemoryRunsOut) {
  const Out r = Run("--values 1000 --concurrency 1,2,3,4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("this GPU holds 2 of these jobs: memory runs out at 3 copies"),
            std::string::npos)
      << r.out;
}

TEST_F(Sweep, AJobFailingForAnotherReasonStopsTheSweep) {
  const Out r = Run("--values 8,16", "--batch {bs} --fail");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("failed for another reason than memory: exit status 3"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the data loader found no files"), std::string::npos)
      << "the job's own words: " << r.err;
  EXPECT_EQ(r.out.find("     16 "), std::string::npos) << "16 was not run: " << r.out;
}

// The demo fleet: the least busy GPU is the idle L40S, GPU 7, whose plain
// `pid: child` (the job of `run --demo`) must not bind to a sweep's runs.
TEST_F(Sweep, OnTheDemoFleetItLeasesTheIdleGpuAndFindsItsBoundary) {
  const Out r = Run("--values 8,16,32 --search --json -", "--batch {bs}", "--demo");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Json(r);
  EXPECT_TRUE(j["demo"].get<bool>());
  EXPECT_EQ(j["gpu"], 7);
  EXPECT_EQ(j["gpu_name"], "NVIDIA L40S");
  for (const auto& run : j["runs"]) {
    if (run["result"] != "fits") continue;
    const double v = run["value"].get<double>();
    EXPECT_EQ(run["peak_process_memory_bytes"].get<double>(), 2 * kGiB + 48 * kMiB * v);
    EXPECT_EQ(run["peak_device_memory_bytes"].get<double>(), 2 * kGiB + 48 * kMiB * v)
        << "only the sweep's run is on the GPU: " << run.dump();
  }
  ASSERT_TRUE(j["boundary"]["found"].get<bool>()) << j.dump(1);
  const double free = j["free_memory_bytes"].get<double>();
  const long boundary = static_cast<long>((free - 2 * kGiB) / (48 * kMiB));
  ExpectBoundaryToOnePercent(j, boundary);
}

TEST_F(Sweep, OnTheDemoFleetUntilOomAndConcurrencyWork) {
  const Out oom = Run("--values 100 --until-oom --json -", "--batch {bs}", "--demo");
  ASSERT_EQ(oom.code, 0) << oom.err;
  EXPECT_EQ(Json(oom)["boundary"]["largest_fit"], 800);
  EXPECT_EQ(Json(oom)["boundary"]["smallest_oom"], 1600);
  // 20.75 GiB a copy on the L40S's 44.99 GiB: two fit, the third runs out.
  const Out conc = Run("--values 400 --concurrency 1,2,3,4 --json -", "--batch {bs}", "--demo");
  ASSERT_EQ(conc.code, 0) << conc.err;
  const auto j = Json(conc);
  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["runs"][2]["per_copy"].size(), 3u);
  EXPECT_EQ(j["runs"][2]["result"], "oom");
  EXPECT_EQ(j["concurrency"]["holds"], 2) << j["concurrency"].dump();
  EXPECT_NE(j["concurrency"]["reason"].get<std::string>().find("memory runs out at 3 copies"),
            std::string::npos)
      << j["concurrency"].dump();
}

TEST_F(Sweep, OnTheDemoFleetAnotherGpuCanBeNamed) {
  const Out r = Run("--gpus 4 --values 8,16 --json -", "--batch {bs}", "--demo");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = Json(r);
  EXPECT_EQ(j["gpu"], 4);
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][1]["peak_process_memory_bytes"].get<double>(), 2 * kGiB + 48 * kMiB * 16);
}

// The page's data is the sweep's JSON; the browser checks (tests/browser/
// sweep_report_cases.sh) look at what it draws.
std::string EmbeddedData(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"gpuwatch-data\">";
  const auto at = html.find(open);
  if (at == std::string::npos) return "";
  const auto from = at + open.size();
  return html.substr(from, html.find("</script>", from) - from);
}

TEST_F(Sweep, ReportWritesOnePageHoldingTheSweep) {
  const Out r = Run("--values 8,16,32 --report " + (dir_ / "sweep.html").string() + " --json " +
                    (dir_ / "sweep.json").string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = Slurp(dir_ / "sweep.html");
  ASSERT_FALSE(html.empty()) << r.err;
  EXPECT_EQ(html.find("<script src"), std::string::npos) << "self-contained";
  const auto data = nlohmann::json::parse(EmbeddedData(html));
  EXPECT_EQ(data["schema"], "gpuwatch.sweep/1");
  EXPECT_EQ(data["runs"].size(), 3u);
  EXPECT_NE(data["title"].get<std::string>().find("gpuwatch sweep"), std::string::npos);
  const auto j = nlohmann::json::parse(Slurp(dir_ / "sweep.json"));
  ASSERT_TRUE(j["verdict"].is_array());
  EXPECT_EQ(j["verdict"][0], "memory: linear: " + j["fit"]["evidence"].get<std::string>());
  EXPECT_NE(r.out.find(j["verdict"][1].get<std::string>()), std::string::npos)
      << "the verdict lines are the table's: " << r.out;
}

TEST_F(Sweep, ReportCommandTakesTheSweepJsonAndRefusesABrokenOne) {
  const Out r = Run("--values 8,16 --json " + (dir_ / "sweep.json").string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string bin = GPUWATCH_BINARY_DIR;
  const auto report = [&](const std::string& source) {
    const std::string cmd = bin + "/gpuwatch report " + source + " -o " +
                            (dir_ / "page.html").string() + " 2>" + (dir_ / "err").string();
    const int status = std::system(cmd.c_str());
    return std::pair{WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(dir_ / "err")};
  };
  const auto [code, err] = report((dir_ / "sweep.json").string());
  ASSERT_EQ(code, 0) << err;
  EXPECT_NE(err.find("a sweep of 2 runs"), std::string::npos) << err;
  EXPECT_EQ(nlohmann::json::parse(EmbeddedData(Slurp(dir_ / "page.html")))["runs"].size(), 2u);

  auto doc = nlohmann::json::parse(Slurp(dir_ / "sweep.json"));
  struct Case {
    std::function<void(nlohmann::json&)> spoil;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {[](nlohmann::json& d) { d["runs"][1]["value"] = "x"; },
            "runs[1].value: expected a number, found \"x\""},
           {[](nlohmann::json& d) { d["runs"][0]["result"] = "maybe"; },
            "runs[0].result: expected \"fits\", \"oom\" or \"failed\""},
           {[](nlohmann::json& d) { d["schema"] = "gpuwatch.sweep/9"; },
            "schema: expected \"gpuwatch.sweep/1\""},
           {[](nlohmann::json& d) { d["fit"].erase("b_bytes_per_value"); },
            "fit.b_bytes_per_value: missing"},
           {[](nlohmann::json& d) { d.erase("runs"); }, "runs: expected an array of runs"},
       }) {
    nlohmann::json bad = doc;
    c.spoil(bad);
    const fs::path path = dir_ / "bad.json";
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(bad.dump(2).c_str(), f);
    std::fclose(f);
    const auto [bad_code, bad_err] = report(path.string());
    EXPECT_EQ(bad_code, 2) << c.message << ": " << bad_err;
    EXPECT_NE(bad_err.find(path.string() + ": " + c.message), std::string::npos) << bad_err;
  }
  const fs::path cut = dir_ / "cut.json";
  std::FILE* f = std::fopen(cut.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(doc.dump(2).substr(0, 200).c_str(), f);
  std::fclose(f);
  const auto [cut_code, cut_err] = report(cut.string());
  EXPECT_EQ(cut_code, 2) << cut_err;
  EXPECT_NE(cut_err.find("not a sweep's JSON (gpuwatch sweep --json) nor a recording: at byte"),
            std::string::npos)
      << cut_err;
}

TEST_F(Sweep, BadInputIsRefusedNamingTheProblem) {
  struct Case {
    std::string options, trainer, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--values 8,x,32", "--batch {bs}", "item 2 (\"x\") is not a whole number"},
           {"--values 8,0", "--batch {bs}", "item 2 (\"0\") is not a whole number"},
           {"--values -4", "--batch {bs}", "is not a whole number"},
           {"--values 8,16", "--batch 8", "the command has no {bs}"},
           {"--search --until-oom", "--batch {bs}", "choose one of"},
           {"--search --bisect", "--batch {bs}", "choose one of --search, --bisect"},
           {"--bisect --max-trials 0", "--batch {bs}", "--max-trials: must be 1 or more"},
           {"--bisect --max-trials -1", "--batch {bs}", "--max-trials: must be 1 or more"},
           {"--concurrency 1,2", "--batch {bs}", "give --values N"},
           {"--values 8,16 --concurrency 1,2", "--batch {bs}", "at one value"},
           {"--values 8 --concurrency 2,1", "--batch {bs}", "increasing order"},
           {"--margin 150%", "--batch {bs}", "--margin \"150%\""},
           {"--gpus auto:2", "--batch {bs}", "one GPU"},
           {"--gpus 5", "--batch {bs}", "there is no GPU 5"},
           {"--report /nonexistent-dir/x.html", "--batch {bs}", "--report: cannot write"},
       }) {
    const Out r = Run(c.options, c.trainer);
    EXPECT_EQ(r.code, 2) << c.options << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.options << ": " << r.err;
  }
}

}  // namespace
