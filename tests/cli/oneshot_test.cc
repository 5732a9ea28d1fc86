// The one-shot front (cli/oneshot_cli.h): `gpuwatch` runs status, query and
// select itself, knows every other command by name, and leaves those, help,
// --replay and whatever it cannot parse to gpuwatch-full, which prints
// exactly what it would have; `top` to gpuwatch-top (cli/top_cli.h), which
// leaves to gpuwatch-full what needs HTTP or SQLite.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/cli_app.h"
#include "cli/help_option.h"
#include "cli/oneshot_cli.h"
#include "cli/top_cli.h"
#include "cli_util.h"

namespace gpuwatch::cli {
namespace {

namespace fs = std::filesystem;
using testing::CmdResult;
using testing::Needed;
using testing::RunBinary;

std::set<std::string> SubcommandNames(const CLI::App& root) {
  std::set<std::string> names;
  for (const CLI::App* c : root.get_subcommands({})) names.insert(c->get_name());
  return names;
}

std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options({})) names.push_back(o->get_name());
  return names;
}

TEST(OneShotFront, KnowsEveryCommandOfTheFullTree) {
  const auto full = BuildCli();
  const auto front = BuildOneShotCli();
  std::set<std::string> expected = {"version", "query", "select"};
  for (std::string_view name : kDelegatedCommands) expected.insert(std::string(name));
  EXPECT_EQ(SubcommandNames(full->app), expected);
  EXPECT_EQ(SubcommandNames(front->app), expected);
}

TEST(OneShotFront, HasTheOneShotCommandsOptions) {
  const auto full = BuildCli();
  const auto front = BuildOneShotCli();
  EXPECT_EQ(OptionNames(front->app), OptionNames(full->app));
  for (const char* name : {"query", "select", "version"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(OptionNames(*front->app.get_subcommand(name)),
              OptionNames(*full->app.get_subcommand(name)));
  }
}

TEST(OneShotFront, RunsTheOneShotCommandsAndLeavesTheRest) {
  using Action = FrontDecision::Action;
  const std::string recording = std::string(GPUWATCH_SOURCE_DIR) + "/README.md";
  const std::vector<std::pair<std::vector<std::string>, Action>> cases = {
      {{}, Action::kRun},
      {{"--json", "--no-daemon"}, Action::kRun},
      {{"-l", "2s", "--demo"}, Action::kRun},
      {{"query", "--query-gpu=index,name", "--format=csv"}, Action::kRun},
      {{"--demo", "query", "--query-compute-apps=pid", "--format=csv"}, Action::kRun},
      {{"select", "-n", "2", "--format", "json"}, Action::kRun},
      {{"version"}, Action::kRun},
      {{"serve"}, Action::kDelegate},
      {{"--demo", "serve", "--listen", "0.0.0.0:9835"}, Action::kDelegate},
      {{"top", "--remote", "a:1,b:2"}, Action::kDelegate},
      {{"run", "--gpus", "auto:1", "--", "python", "train.py", "--lr", "3"}, Action::kDelegate},
      {{"watch", "-i", "100ms"}, Action::kDelegate},
      {{"report", "x.jsonl"}, Action::kDelegate},
      {{"sweep", "--values", "8,16", "--", "train", "{bs}"}, Action::kDelegate},
      {{"doctor"}, Action::kDelegate},
      {{"completion", "bash"}, Action::kDelegate},
      {{"man"}, Action::kDelegate},
      {{"--help"}, Action::kDelegate},
      {{"query", "--help"}, Action::kDelegate},
      {{"-h"}, Action::kDelegate},
      {{"--bogus"}, Action::kDelegate},
      {{"frobnicate"}, Action::kDelegate},
      {{"query", "--query-gpu="}, Action::kDelegate},
      {{"query", "--", "x"}, Action::kDelegate},
      {{"--replay", recording}, Action::kDelegate},
      {{"query", "--replay", recording}, Action::kDelegate},
  };
  for (const auto& [argv, action] : cases) {
    std::string line;
    for (const auto& a : argv) line += a + " ";
    SCOPED_TRACE(line);
    auto cli = BuildOneShotCli();
    const FrontDecision d = ParseOneShot(*cli, argv);
    EXPECT_EQ(d.action, action);
    if (d.action == Action::kDelegate) {
      EXPECT_STREQ(d.binary, argv.size() > 0 && argv[0] == "top" ? kTopBinary : kFullBinary);
    }
  }
}

// `top` goes to gpuwatch-top, also with what the front cannot parse after it
// (its -i is the GPU, top's the interval); gpuwatch-top decides the rest.
TEST(OneShotFront, LeavesTopToGpuwatchTop) {
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{{"top"},
                                             {"top", "-i", "500ms"},
                                             {"--demo", "top"},
                                             {"top", "--theme", "mono", "--readonly"},
                                             {"top", "--remote", "a:1"},
                                             {"top", "--help"}}) {
    std::string line;
    for (const auto& a : argv) line += a + " ";
    SCOPED_TRACE(line);
    auto cli = BuildOneShotCli();
    const FrontDecision d = ParseOneShot(*cli, argv);
    EXPECT_EQ(d.action, FrontDecision::Action::kDelegate);
    EXPECT_STREQ(d.binary, kTopBinary);
  }
}

// gpuwatch-top runs top on this machine's GPUs, the demo and scenarios, and
// hands gpuwatch-full whatever needs HTTP (--remote, --prometheus, a webhook
// rule), a recording (it may be a SQLite history), help, other commands and
// mistakes.
TEST(TopBinary, RunsLocalTopAndLeavesTheRestToGpuwatchFull) {
  using Action = FrontDecision::Action;
  const fs::path dir = fs::temp_directory_path() / ("gw-top-rules-" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto write = [&dir](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string rule =
      "version: 1\nrules:\n  - name: hot\n    condition: temperature_gpu_celsius > 80C\n    "
      "actions:\n";
  const std::string logs = write("log.yaml", rule + "      - log\n");
  const std::string hook =
      write("hook.yaml", rule + "      - log\n      - webhook: http://127.0.0.1:9/x\n");
  const std::string broken = write("broken.yaml", "version: 1\nrules: [\n");
  const std::string recording = std::string(GPUWATCH_SOURCE_DIR) + "/README.md";
  const std::vector<std::pair<std::vector<std::string>, Action>> cases = {
      {{"top"}, Action::kRun},
      {{"top", "-i", "500ms", "--theme", "light", "--ascii", "--no-mouse"}, Action::kRun},
      {{"--demo", "top"}, Action::kRun},
      {{"top", "--demo", "--readonly"}, Action::kRun},
      {{"--scenario", recording, "top"}, Action::kRun},
      {{"top", "--rules", logs}, Action::kRun},
      {{"top", "--rules", hook}, Action::kDelegate},
      {{"top", "--rules", broken}, Action::kDelegate},
      {{"top", "--rules", (dir / "missing.yaml").string()}, Action::kDelegate},
      {{"top", "--remote", "a:1,b:2"}, Action::kDelegate},
      {{"top", "--remote", ""}, Action::kDelegate},
      {{"top", "--prometheus", "http://p:9090"}, Action::kDelegate},
      {{"--replay", recording, "top"}, Action::kDelegate},
      {{"top", "--replay", recording}, Action::kDelegate},
      {{"top", "--help"}, Action::kDelegate},
      {{"top", "--bogus"}, Action::kDelegate},
      {{"top", "-i"}, Action::kDelegate},
      {{"--version"}, Action::kDelegate},
      {{}, Action::kDelegate},
      {{"watch"}, Action::kDelegate},
      {{"query"}, Action::kDelegate},
  };
  for (const auto& [argv, action] : cases) {
    std::string line;
    for (const auto& a : argv) line += a + " ";
    SCOPED_TRACE(line);
    auto cli = BuildTopCli();
    EXPECT_EQ(ParseTopOnly(*cli, argv).action, action);
  }
  fs::remove_all(dir);
}

TEST(TopBinary, HasTopsOptions) {
  const auto full = BuildCli();
  const auto top = BuildTopCli();
  EXPECT_EQ(OptionNames(top->app), OptionNames(full->app));
  EXPECT_EQ(OptionNames(*top->app.get_subcommand("top")),
            OptionNames(*full->app.get_subcommand("top")));
}

TEST(OneShotFront, PrintsTheVersionItself) {
  auto cli = BuildOneShotCli();
  ::testing::internal::CaptureStdout();
  const FrontDecision d = ParseOneShot(*cli, {"--version"});
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            std::string("gpuwatch ") + GPUWATCH_VERSION + "\n");
  EXPECT_EQ(d.action, FrontDecision::Action::kExit);
  EXPECT_EQ(d.code, 0);
}

// `text` with its clock readings masked: two runs read the clock apart.
std::string Clockless(const std::string& text) {
  static const std::regex kClock(R"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?|\d\d:\d\d:\d\d)");
  return std::regex_replace(text, kClock, "<clock>");
}

// Each line run by both executables: the same exit status, output and errors
// (the clock aside).
TEST(OneShotFront, PrintsWhatGpuwatchFullPrints) {
  const std::string fixed = testing::kFixed + " --no-daemon";
  for (const std::string& args :
       {fixed, fixed + " --json", fixed + " --compact", fixed + " query",
        fixed + " query --query-gpu=index,name,memory.used,utilization.gpu --format=csv",
        fixed + " query --query-compute-apps=pid,used_memory --format=csv,noheader",
        fixed + " query --query-gpu=bogus", fixed + " select --format json", fixed + " select -n 9",
        std::string("--help"), std::string("query --help"), std::string("select --help"),
        std::string("--bogus"), std::string("frobnicate"), std::string("serve --listen"),
        std::string("version"), std::string("-V"), std::string("completion fish"),
        std::string("--replay scenarios/leaks/h200_leak_fast.jsonl --replay-speed 0 --compact")}) {
    SCOPED_TRACE(args);
    const CmdResult front = RunBinary("gpuwatch", args);
    const CmdResult full = RunBinary("gpuwatch-full", args);
    EXPECT_EQ(front.code, full.code);
    EXPECT_EQ(Clockless(front.out), Clockless(full.out));
    EXPECT_EQ(Clockless(front.err), Clockless(full.err));
  }
}

// Commands that are not the front's run as gpuwatch-full in the same process:
// `run`'s job sees gpuwatch-full as its parent.
TEST(OneShotFront, RunsGpuwatchFullInItsOwnPlace) {
  const CmdResult r =
      RunBinary("gpuwatch", testing::kFixed + " run -q -- sh -c 'readlink /proc/$PPID/exe'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("/gpuwatch-full\n"), std::string::npos) << r.out;
}

TEST(OneShotFront, LoadsNoneOfTheOtherCommandsLibrariesNorTheCxxRuntime) {
  const std::string front = Needed(std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch");
  const std::string full = Needed(std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch-full");
  ASSERT_NE(front.find("libc.so"), std::string::npos) << "readelf -d found nothing: " << front;
  // What the check looks for is there in gpuwatch-full.
  EXPECT_NE(full.find("libsqlite3"), std::string::npos) << full;
  EXPECT_NE(full.find("libyaml-cpp"), std::string::npos) << full;
  EXPECT_NE(full.find("libstdc++"), std::string::npos) << full;
  EXPECT_NE(full.find("libfmt"), std::string::npos) << full;
  // Nor the C++ runtime and {fmt}: linked in (src/cli/CMakeLists.txt).
  for (const char* lib :
       {"libcpp-httplib", "libssl", "libcrypto", "libsqlite3", "libyaml-cpp", "libncurses",
        "libtinfo", "libbrotli", "libz.", "libstdc++", "libfmt", "libgcc_s"}) {
    EXPECT_EQ(front.find(lib), std::string::npos) << lib << " in\n" << front;
  }
}

TEST(OneShotFront, WithoutGpuwatchFullSaysWhatIsMissingAndStillAnswers) {
  const fs::path dir = fs::temp_directory_path() / ("gw-front-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::copy_file(std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch", dir / "gpuwatch");
  const std::string env =
      "GPUWATCH_NVML_LIBRARY=" + std::string(GPUWATCH_BINARY_DIR) +
      "/lib/libnvidia-ml-fake.so GPUWATCH_FAKE_SCENARIO=" + GPUWATCH_SOURCE_DIR +
      "/scenarios/test/fixed.yaml";
  const CmdResult serve = RunBinary((dir / "gpuwatch").string(), "serve", env);
  EXPECT_EQ(serve.code, 1);
  EXPECT_NE(serve.err.find("cannot start " + (dir / "gpuwatch-full").string()), std::string::npos)
      << serve.err;
  // top: neither gpuwatch-top nor gpuwatch-full is there.
  const CmdResult top = RunBinary((dir / "gpuwatch").string(), "top", env);
  EXPECT_EQ(top.code, 1);
  EXPECT_NE(top.err.find("cannot start " + (dir / "gpuwatch-full").string()), std::string::npos)
      << top.err;
  const CmdResult status = RunBinary((dir / "gpuwatch").string(), "--no-daemon --json", env);
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("\"devices\""), std::string::npos);
  fs::remove_all(dir);
}

// An installation without gpuwatch-top (one copied before it existed) still
// has top: in gpuwatch-full.
TEST(OneShotFront, WithoutGpuwatchTopRunsTopInGpuwatchFull) {
  const fs::path dir = fs::temp_directory_path() / ("gw-front-top-" + std::to_string(getpid()));
  fs::create_directories(dir);
  for (const char* name : {"gpuwatch", "gpuwatch-full"}) {
    fs::copy_file(std::string(GPUWATCH_BINARY_DIR) + "/" + name, dir / name);
  }
  const CmdResult top = RunBinary((dir / "gpuwatch").string(), "top", "");
  EXPECT_EQ(top.code, 2) << top.err;
  EXPECT_NE(top.err.find("top needs a full-screen terminal"), std::string::npos) << top.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuwatch::cli
