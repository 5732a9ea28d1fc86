// The view and the keys of `top` on the demo fleet (the real NvmlBackend over
// the fake NVML), drawn into canvases: layout at 80x24 and 200x60, sorting,
// filtering, the tree, tags, the signal rules, a terminal too small (the
// fleet overview: fleet_view_test). The real binary in a real terminal: top_tmux_test.
#include "tui/view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <iterator>

#include "tui/keys.h"
#include "tui_test_model.h"

namespace gpuwatch::tui {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::uint32_t> Pids(const Layout& layout) {
  std::vector<std::uint32_t> out;
  for (const ProcessRow& r : layout.rows) out.push_back(r.key.pid);
  return out;
}

TEST(TopView, EightGpusFit80x24InCompactMode) {
  const TopModel m = DemoModel();
  ViewState st;
  const Drawn d = Draw(m, st, 80, 24);
  const std::string text = d.canvas.Text();
  EXPECT_TRUE(d.layout.compact);
  EXPECT_THAT(d.canvas.Line(0), HasSubstr("gpuwatch top"));
  EXPECT_THAT(d.canvas.Line(0), HasSubstr("DEMO"));
  const int gpus = static_cast<int>(m.hosts[0].state.snapshot->devices.size());
  ASSERT_EQ(gpus, 8);
  // One line a GPU, in index order, right under the header.
  for (int i = 0; i < gpus; ++i) {
    EXPECT_THAT(d.canvas.Line(1 + i), HasSubstr(std::to_string(i) + " ")) << text;
    EXPECT_THAT(d.canvas.Line(1 + i), HasSubstr("MEM")) << text;
  }
  EXPECT_THAT(d.canvas.Line(1 + gpus), HasSubstr("PID")) << text;
  EXPECT_THAT(d.canvas.Line(1 + gpus), HasSubstr("COMMAND")) << text;
  EXPECT_GE(d.layout.table_rows, 5) << text;
  EXPECT_THAT(text, HasSubstr("41001"));
  // No line runs past 80 columns and nothing is drawn below row 24.
  for (int y = 0; y < 24; ++y) EXPECT_LE(Columns(d.canvas.Line(y)), 80);
}

TEST(TopView, A200x60TerminalGetsFullBlocksChartsAndEvents) {
  TopModel m = DemoModel();
  Event e;
  e.time = m.hosts[0].state.snapshot->time;
  e.kind = Event::Kind::kLeakSuspected;
  e.severity = Severity::kWarning;
  e.message = "pid 41101 on GPU 2 leaks 100 MiB/min";
  m.hosts[0].AddEvent(e);
  ViewState st;
  const Drawn d = Draw(m, st, 200, 60);
  const std::string text = d.canvas.Text();
  EXPECT_FALSE(d.layout.compact) << text;
  EXPECT_THAT(text, HasSubstr("SM "));
  EXPECT_THAT(text, HasSubstr("MHz"));
  // The chart pane: the selected process's GPU.
  EXPECT_THAT(text, ::testing::ContainsRegex("GPU [0-7] memory [0-9]+% \\(last 1 min\\)"));
  EXPECT_THAT(text, ::testing::ContainsRegex("GPU [0-7] temperature"));
  EXPECT_THAT(text, HasSubstr("leaks 100 MiB/min"));  // the events pane
  // The A100 in MIG mode has its two instances under it.
  EXPECT_THAT(text, HasSubstr("5:0 "));
  EXPECT_THAT(text, HasSubstr("5:1 "));
  EXPECT_EQ(text.find("5:0 "), text.find("5:1 ") - (text.find("5:1 ") - text.find("5:0 ")));
  EXPECT_LT(text.find("  5 A100"), text.find("5:0 "));
  EXPECT_LT(text.find("5:1 "), text.find("  6 L40S"));
}

TEST(TopView, ATerminalTooSmallGetsAOneLineNotice) {
  const TopModel m = DemoModel();
  ViewState st;
  const Drawn d = Draw(m, st, 30, 5);
  EXPECT_THAT(d.canvas.Line(0), HasSubstr("too small"));
  for (int y = 1; y < 5; ++y) EXPECT_EQ(d.canvas.Line(y), "");
}

TEST(TopView, AsciiGlyphsOnlyWhenUnicodeIsOff) {
  const TopModel m = DemoModel();
  ViewState st;
  st.unicode = false;
  for (auto [w, h] : {std::pair{80, 24}, std::pair{200, 60}}) {
    const std::string text = Draw(m, st, w, h).canvas.Text();
    for (char c : text) ASSERT_LT(static_cast<unsigned char>(c), 0x80) << text;
    EXPECT_THAT(text, HasSubstr("#"));  // the memory bars
  }
}

TEST(TopKeys, SortByKeysAndByClickingAColumnTitle) {
  const TopModel m = DemoModel();
  ViewState st;
  Drawn d = Draw(m, st, 120, 40);
  // Default: GPU memory, largest first.
  EXPECT_EQ(Pids(d.layout).front(), 41002u);
  // Click PID's title: ascending pids; again: descending.
  const auto found =
      std::find_if(d.layout.header.begin(), d.layout.header.end(),
                   [](const Layout::Span& s) { return s.value == static_cast<int>(Column::kPid); });
  ASSERT_NE(found, d.layout.header.end());
  const Layout::Span pid_title = *found;
  const Layout::Span* pid = &pid_title;
  HandleMouse({pid->x0, d.layout.header_y}, st, m, d.layout);
  d = Draw(m, st, 120, 40);
  EXPECT_THAT(Pids(d.layout), ::testing::ElementsAre(41001u, 41002u, 41101u, 41201u, 41301u, 41401u,
                                                     41402u, 41501u));
  HandleMouse({pid->x0, d.layout.header_y}, st, m, d.layout);
  d = Draw(m, st, 120, 40);
  EXPECT_EQ(Pids(d.layout).front(), 41501u);
  EXPECT_THAT(d.canvas.Line(d.layout.header_y), HasSubstr("PID▼"));
  // '>' walks to the next column (USER: A to Z), 'r' reverses it.
  HandleKey('>', st, m, d.layout, {});
  EXPECT_EQ(st.sort, Column::kUser);
  d = Draw(m, st, 120, 40);
  EXPECT_EQ(d.layout.rows.front().user, "alice");
  HandleKey('r', st, m, d.layout, {});
  d = Draw(m, st, 120, 40);
  EXPECT_EQ(d.layout.rows.front().user, "frank");
}

TEST(TopKeys, TheFilterNarrowsAsYouTypeAndEscapeClearsIt) {
  const TopModel m = DemoModel();
  ViewState st;
  Drawn d = Draw(m, st, 120, 40);
  HandleKey('/', st, m, d.layout, {});
  EXPECT_TRUE(st.editing_filter);
  for (char c : std::string("eri")) HandleKey(c, st, m, d.layout, {});
  d = Draw(m, st, 120, 40);
  EXPECT_THAT(Pids(d.layout), ::testing::UnorderedElementsAre(41401u, 41402u));
  EXPECT_THAT(d.canvas.Line(39), HasSubstr("filter: eri"));
  HandleKey(kKeyEnter, st, m, d.layout, {});
  EXPECT_FALSE(st.editing_filter);
  // By GPU, by container, by Slurm job.
  for (auto [text, pid] : {std::pair{"gpu3", 41201u}, std::pair{"slurm:88123", 41101u},
                           std::pair{"c7d7b827", 41501u}}) {
    st.filter = text;
    EXPECT_THAT(Pids(Draw(m, st, 120, 40).layout), ::testing::ElementsAre(pid)) << text;
  }
  st.filter = "nobody-runs-this";
  d = Draw(m, st, 120, 40);
  EXPECT_TRUE(d.layout.rows.empty());
  EXPECT_THAT(d.canvas.Text(), HasSubstr("no process matches the filter"));
  HandleKey(kKeyEscape, st, m, d.layout, {});
  EXPECT_EQ(st.filter, "");
  EXPECT_EQ(Draw(m, st, 120, 40).layout.rows.size(), 8u);
}

TEST(TopView, TheTreeShowsProcessesUnderTheirLauncher) {
  const TopModel m = DemoModel();
  ViewState st;
  st.tree = true;
  Families f;
  f.parents = {{41001, 41000}, {41002, 41000}, {41000, 1}, {41201, 1}, {41101, 500}, {500, 1}};
  f.name_of = [](std::uint32_t pid) {
    return pid == 41000 ? std::string("torchrun --nproc 2") : "";
  };
  const Drawn d = Draw(m, st, 120, 40, &f);
  std::vector<std::uint32_t> pids = Pids(d.layout);
  auto at = [&](std::uint32_t pid) {
    return std::find(pids.begin(), pids.end(), pid) - pids.begin();
  };
  ASSERT_NE(at(41000), static_cast<long>(pids.size()));  // the launcher, though it holds no GPU
  EXPECT_EQ(at(41002), at(41000) + 1);  // siblings sorted as the table is: memory, largest first
  EXPECT_EQ(at(41001), at(41000) + 2);
  const ProcessRow& head = d.layout.rows[static_cast<std::size_t>(at(41000))];
  EXPECT_FALSE(head.is_process);
  EXPECT_EQ(d.layout.rows[static_cast<std::size_t>(at(41002))].branch, "├─ ");
  EXPECT_EQ(d.layout.rows[static_cast<std::size_t>(at(41001))].branch, "└─ ");
  const std::string text = d.canvas.Text();
  EXPECT_THAT(text, HasSubstr("torchrun --nproc 2"));
  EXPECT_THAT(text, HasSubstr("└─ python train.py"));
  // A single process under a non-GPU parent has no head row.
  EXPECT_EQ(at(500), static_cast<long>(pids.size()));
}

TEST(TopKeys, SignalsGoOnlyToYourOwnProcessesEachConfirmed) {
  const TopModel m = DemoModel();
  ViewState st;
  Drawn d = Draw(m, st, 120, 40);
  const ProcessRow& first = d.layout.rows.front();  // alice's rank 1
  ASSERT_TRUE(first.sample->host.uid.has_value());
  const std::uint32_t alice = *first.sample->host.uid;
  // Tag both of alice's processes: Space tags and moves down.
  HandleKey(' ', st, m, d.layout, {alice});
  HandleKey(' ', st, m, d.layout, {alice});
  EXPECT_EQ(st.tagged.size(), 2u);
  d = Draw(m, st, 120, 40);
  EXPECT_EQ(d.canvas.Line(d.layout.table_y).substr(0, 1), "*");
  // Alice: asked once, then sent to both.
  Action a = HandleKey('T', st, m, d.layout, {alice});
  ASSERT_TRUE(st.pending.has_value()) << st.message;
  EXPECT_EQ(a.kind, Action::Kind::kNone);
  EXPECT_THAT(Draw(m, st, 120, 40).canvas.Line(39), HasSubstr("Send SIGTERM to 2 processes"));
  a = HandleKey('y', st, m, d.layout, {alice});
  EXPECT_EQ(a.kind, Action::Kind::kSignal);
  EXPECT_EQ(a.signal, SIGTERM);
  EXPECT_EQ(a.targets.size(), 2u);
  // Someone else (uid 4242): refused, naming whose it is.
  st.tagged.clear();
  a = HandleKey('K', st, m, d.layout, {4242});
  EXPECT_FALSE(st.pending.has_value());
  EXPECT_EQ(a.kind, Action::Kind::kNone);
  EXPECT_THAT(st.message, HasSubstr("not yours"));
  EXPECT_THAT(st.message, HasSubstr("carol"));  // the selection moved on to carol's job
  // Root: a second confirmation; n cancels.
  HandleKey('I', st, m, d.layout, {0});
  ASSERT_TRUE(st.pending.has_value());
  EXPECT_EQ(st.pending->confirmations_needed, 2);
  EXPECT_THAT(Draw(m, st, 120, 40).canvas.Line(39), HasSubstr("You are root"));
  EXPECT_EQ(HandleKey('y', st, m, d.layout, {0}).kind, Action::Kind::kNone);
  EXPECT_EQ(HandleKey('y', st, m, d.layout, {0}).signal, SIGINT);
  HandleKey('T', st, m, d.layout, {0});
  EXPECT_EQ(HandleKey('n', st, m, d.layout, {0}).kind, Action::Kind::kNone);
  EXPECT_FALSE(st.pending.has_value());
  EXPECT_THAT(st.message, HasSubstr("nothing sent"));
  // --readonly, and sources that are not this machine.
  st.readonly = true;
  HandleKey('T', st, m, d.layout, {alice});
  EXPECT_FALSE(st.pending.has_value());
  EXPECT_THAT(st.message, HasSubstr("--readonly"));
  st.readonly = false;
  TopModel remote = DemoModel();
  remote.kind = SourceKind::kRemote;
  HandleKey('T', st, remote, d.layout, {alice});
  EXPECT_FALSE(st.pending.has_value());
  EXPECT_THAT(st.message, HasSubstr("this machine"));
}

TEST(TopView, TheProcessViewShowsItsFrameworkMemoryAndLeakVerdict) {
  TopModel m = DemoModel();
  HostState& s = m.hosts[0].state;
  ProcessFrameworkMemory fw;
  fw.gpu = 2;
  fw.pid = 41101;
  fw.framework = "torch";
  fw.bytes = {{"allocated", 20.0 * (1 << 30)}, {"reserved", 24.0 * (1 << 30)}};
  s.framework.push_back(fw);
  leaks::LeakReport leak;
  leak.subject.gpu = 2;
  leak.subject.process = ProcessKey{41101, 0};
  leak.estimate.suspected = true;
  leak.estimate.rate_bytes_per_s = 100.0 * (1 << 20) / 60;
  leak.time_to_full = std::chrono::hours(17);
  s.leaks.push_back(leak);
  ViewState st;
  st.filter = "41101";
  Drawn d = Draw(m, st, 120, 40);
  ASSERT_EQ(d.layout.rows.size(), 1u);
  EXPECT_THAT(d.canvas.Text(), HasSubstr("[leak] python finetune.py"));
  HandleKey(kKeyEnter, st, m, d.layout, {});
  EXPECT_EQ(st.screen, Screen::kProcess);
  d = Draw(m, st, 120, 40);
  const std::string text = d.canvas.Text();
  EXPECT_THAT(text, HasSubstr("pid 41101"));
  EXPECT_THAT(text, HasSubstr("torch allocated 20.0G  reserved 24.0G"));
  EXPECT_THAT(text, HasSubstr("LEAK 100.0 MiB/min, GPU full in ~17h"));
  EXPECT_THAT(text, HasSubstr("Slurm job 88123"));
  EXPECT_THAT(text, HasSubstr("GPU memory"));
  // e: the environment, here refused as the details say.
  HandleKey('e', st, m, d.layout, {});
  EXPECT_EQ(st.screen, Screen::kEnvironment);
  ProcessDetails details;
  details.environment_refused = "pid 41101 is not your process";
  Canvas c(120, 40);
  Render({m, st, nullptr, &details, std::chrono::system_clock::now()}, c);
  EXPECT_THAT(c.Text(), HasSubstr("not your process"));
  details = {};
  details.environment = {"CUDA_VISIBLE_DEVICES=2", "HOME=/home/bob"};
  Canvas c2(120, 40);
  Render({m, st, nullptr, &details, std::chrono::system_clock::now()}, c2);
  EXPECT_THAT(c2.Text(), HasSubstr("CUDA_VISIBLE_DEVICES=2"));
  HandleKey(kKeyEscape, st, m, d.layout, {});
  EXPECT_EQ(st.screen, Screen::kProcess);
  HandleKey(kKeyEscape, st, m, d.layout, {});
  EXPECT_EQ(st.screen, Screen::kMain);
}

TEST(TopView, TheHelpScreenListsEveryKey) {
  const TopModel m = DemoModel();
  ViewState st;
  Drawn d = Draw(m, st, 120, 40);
  HandleKey('?', st, m, d.layout, {});
  const std::string text = Draw(m, st, 140, 60).canvas.Text();
  for (const KeyHelp& k : KeyList()) EXPECT_THAT(text, HasSubstr(k.keys)) << k.keys;
  HandleKey('q', st, m, d.layout, {});
  EXPECT_EQ(st.screen, Screen::kMain);
  EXPECT_EQ(HandleKey('q', st, m, d.layout, {}).kind, Action::Kind::kQuit);
}

TEST(TopView, WrapBreaksAtSpacesWithinTheWidthAndSaysWhenItCut) {
  const std::string text =
      "down: POST http://127.0.0.1:9835/api/v1/query: HTTP 405: not a Prometheus API answer";
  const auto lines = Wrap(text, 40, 10, true);
  std::string joined;
  for (const std::string& l : lines) {
    EXPECT_LE(Columns(l), 40) << l;
    joined += (joined.empty() ? "" : " ") + l;
  }
  EXPECT_EQ(joined, text);
  EXPECT_EQ(lines[0], "down: POST");  // the URL is longer than what is left of the line
  const auto cut = Wrap(text, 30, 2, true);
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[1].substr(cut[1].size() - 3), "…");
  EXPECT_EQ(Wrap(std::string(70, 'x'), 30, 5, false).size(), 3u);  // a word longer than a line
  EXPECT_TRUE(Wrap("", 30, 5, true).empty());
}

TEST(TopView, AHostDownBeforeItsFirstAnswerShowsTheWholeReason) {
  TopModel m;
  m.kind = SourceKind::kRemote;
  m.hosts.emplace_back();
  m.hosts.back().state.label = "prometheus";
  const std::string why =
      "POST http://127.0.0.1:9835/api/v1/query: HTTP 405: not a Prometheus API answer: no "
      "\"status\" (\"{\"error\":\"gpuwatch serve is read-only: only GET and HEAD\"}\")";
  m.hosts.back().state.down = why;
  ViewState st;
  const std::string text = Draw(m, st, 80, 24).canvas.Text();
  // Over three lines, broken at spaces, nothing lost.
  EXPECT_THAT(text, HasSubstr("\n down: POST http://127.0.0.1:9835/api/v1/query: HTTP 405: not a"))
      << text;
  EXPECT_THAT(text, HasSubstr("read-only: only GET and\n HEAD\"}\")\n")) << text;
}

TEST(TopKeys, MouseSelectsARowAndTheWheelScrolls) {
  const TopModel m = DemoModel();
  ViewState st;
  Drawn d = Draw(m, st, 120, 40);
  HandleMouse({10, d.layout.table_y + 3}, st, m, d.layout);
  EXPECT_EQ(st.selected, d.layout.rows[3].key);
  HandleMouse({10, 5, Mouse::Button::kWheelDown}, st, m, d.layout);
  EXPECT_EQ(st.selected, d.layout.rows[6].key);
  HandleKey(kKeyHome, st, m, d.layout, {});
  EXPECT_EQ(st.selected, d.layout.rows.front().key);
  HandleKey('G', st, m, d.layout, {});
  EXPECT_EQ(st.selected, d.layout.rows.back().key);
}

}  // namespace
}  // namespace gpuwatch::tui

namespace gpuwatch::tui {
namespace {

// docs/top.md's key table lists every key the help screen does.
TEST(TopView, TheDocsListEveryKeyTheHelpScreenDoes) {
  std::ifstream in(std::string(GPUWATCH_SOURCE_DIR) + "/docs/top.md");
  ASSERT_TRUE(in);
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const KeyHelp& k : KeyList()) EXPECT_THAT(doc, HasSubstr("| `" + k.keys + "` |")) << k.keys;
}

}  // namespace
}  // namespace gpuwatch::tui
