// The fleet overview of `top --remote` / `--prometheus` on two demo hosts:
// the freest GPU first by default, every column sortable by keys and clicks
// (unknown values last either way), down hosts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tui/keys.h"
#include "tui_test_model.h"

namespace gpuwatch::tui {
namespace {

using ::testing::HasSubstr;

// The text of one fleet column in every GPU row, by the header's spans.
std::vector<std::string> FleetColumnText(const Drawn& d, FleetColumn c) {
  const Layout::Span& s = d.layout.header.at(static_cast<std::size_t>(c));
  std::vector<std::string> out;
  for (int i = 0; i < d.layout.fleet_rows; ++i) {
    std::string cell;
    for (int x = s.x0; x < s.x1; ++x) cell += d.canvas.At(x, d.layout.fleet_y + i).text();
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    out.push_back(cell);
  }
  return out;
}

std::vector<double> Numbers(const std::vector<std::string>& cells) {
  std::vector<double> out;
  for (const std::string& c : cells) out.push_back(std::stod(c));  // "61C", "412W", "3"
  return out;
}

TopModel TwoHosts() {
  TopModel m;
  m.kind = SourceKind::kRemote;
  m.hosts.push_back(DemoHost());
  m.hosts.back().state.label = "node-a:9835";
  m.hosts.push_back(DemoHost());
  m.hosts.back().state.label = "node-b:9835";
  return m;
}

TEST(TopFleet, TheFleetOverviewPutsTheFreestGpuFirstAndShowsDownHosts) {
  TopModel m;
  m.kind = SourceKind::kRemote;
  m.hosts.push_back(DemoHost());
  m.hosts.back().state.label = "node-a:9835";
  m.hosts.emplace_back();
  m.hosts.back().state.label = "node-b:9835";
  m.hosts.back().state.down = "connection refused";
  ViewState st;
  Drawn d = Draw(m, st, 120, 40);
  const std::string text = d.canvas.Text();
  EXPECT_THAT(d.canvas.Line(0), HasSubstr("fleet: 1 of 2 hosts up, 8 GPUs"));
  EXPECT_THAT(d.canvas.Line(1), HasSubstr("Fleet"));
  EXPECT_THAT(d.canvas.Line(1), HasSubstr("node-b:9835 (down)"));
  EXPECT_EQ(d.layout.fleet_rows, 8);
  // GPU 2 (35 GiB of 140 used) has the most free memory of the demo's eight.
  EXPECT_THAT(d.canvas.Line(d.layout.fleet_y), HasSubstr("node-a:9835"));
  EXPECT_THAT(d.canvas.Line(d.layout.fleet_y), HasSubstr("freest"));
  EXPECT_THAT(d.canvas.Line(d.layout.fleet_y), ::testing::ContainsRegex("9835 +2 "));
  EXPECT_THAT(text, HasSubstr("node-b:9835      down: connection refused"));
  // Tab: the first host's own view, then the second's.
  HandleKey(kKeyTab, st, m, d.layout, {});
  d = Draw(m, st, 120, 40);
  EXPECT_THAT(d.canvas.Text(), HasSubstr("41001"));
  HandleKey(kKeyTab, st, m, d.layout, {});
  EXPECT_THAT(Draw(m, st, 120, 40).canvas.Text(), HasSubstr("down: connection refused"));
  HandleKey(kKeyBackTab, st, m, d.layout, {});
  EXPECT_EQ(st.tab, 1);
}

TEST(TopFleet, EveryColumnSortsByKeysAndClicksAndTheFreestStaysMarked) {
  TopModel m = TwoHosts();
  m.hosts.back().state.down = "connection refused";  // its last answer stays, free unknown
  ViewState st;
  Drawn d = Draw(m, st, 120, 40);
  ASSERT_EQ(d.layout.fleet_rows, 16);
  ASSERT_EQ(d.layout.header.size(), static_cast<std::size_t>(kFleetColumnCount));
  EXPECT_THAT(d.canvas.Line(d.layout.header_y), HasSubstr("FREE▼"));
  // Free memory largest first; the down host's GPUs (free unknown) last.
  const auto hosts = FleetColumnText(d, FleetColumn::kHost);
  EXPECT_TRUE(std::all_of(hosts.begin(), hosts.begin() + 8,
                          [](const std::string& h) { return h == "node-a:9835"; }));
  EXPECT_TRUE(std::all_of(hosts.begin() + 8, hosts.end(),
                          [](const std::string& h) { return h == "node-b:9835"; }));
  const auto frees = FleetColumnText(d, FleetColumn::kFree);
  EXPECT_EQ(frees.back(), "—");

  // `r` reverses: the least free first, the unknowns still last.
  HandleKey('r', st, m, d.layout, {});
  d = Draw(m, st, 120, 40);
  EXPECT_THAT(d.canvas.Line(d.layout.header_y), HasSubstr("FREE▲"));
  EXPECT_EQ(FleetColumnText(d, FleetColumn::kFree).back(), "—");
  EXPECT_NE(FleetColumnText(d, FleetColumn::kFree).front(), frees.front());
  // ... and the freest GPU keeps its mark wherever it is.
  int marked = 0;
  for (int i = 0; i < d.layout.fleet_rows; ++i) {
    if (d.canvas.Line(d.layout.fleet_y + i).find("freest") != std::string::npos) {
      ++marked;
      EXPECT_EQ(FleetColumnText(d, FleetColumn::kFree)[static_cast<std::size_t>(i)], frees.front());
    }
  }
  EXPECT_EQ(marked, 1);

  // A click on TEMP: the hottest first (both hosts' last values are known).
  const Layout::Span temp = d.layout.header[static_cast<std::size_t>(FleetColumn::kTemp)];
  HandleMouse({temp.x0 + 1, d.layout.header_y}, st, m, d.layout);
  EXPECT_EQ(st.fleet_sort, FleetColumn::kTemp);
  d = Draw(m, st, 120, 40);
  auto temps = Numbers(FleetColumnText(d, FleetColumn::kTemp));
  EXPECT_TRUE(std::is_sorted(temps.rbegin(), temps.rend()));
  EXPECT_NE(temps.front(), temps.back());  // the demo's GPUs differ: the order is seen
  // Again: the coolest first.
  HandleMouse({temp.x0 + 1, d.layout.header_y}, st, m, d.layout);
  d = Draw(m, st, 120, 40);
  temps = Numbers(FleetColumnText(d, FleetColumn::kTemp));
  EXPECT_TRUE(std::is_sorted(temps.begin(), temps.end()));

  // `<` from TEMP walks to UTIL, then TOTAL; `>` back. The GPU index sorts up.
  HandleKey('<', st, m, d.layout, {});
  EXPECT_EQ(st.fleet_sort, FleetColumn::kUtil);
  HandleKey('>', st, m, d.layout, {});
  EXPECT_EQ(st.fleet_sort, FleetColumn::kTemp);
  st.fleet_sort = FleetColumn::kName;
  HandleKey('<', st, m, d.layout, {});
  EXPECT_EQ(st.fleet_sort, FleetColumn::kGpu);
  EXPECT_FALSE(st.fleet_reverse);
  d = Draw(m, st, 120, 40);
  const auto index = Numbers(FleetColumnText(d, FleetColumn::kGpu));
  EXPECT_TRUE(std::is_sorted(index.begin(), index.end()));
  EXPECT_EQ(index[0], 0);
  EXPECT_EQ(index[1], 0);  // one of each host, in host order
  EXPECT_EQ(FleetColumnText(d, FleetColumn::kHost)[0], "node-a:9835");

  // The process table's sort is untouched by all of it.
  EXPECT_EQ(st.sort, Column::kMemory);
  EXPECT_TRUE(st.reverse);
}

TEST(TopFleet, SignalKeysAreOfferedOnlyForThisMachinesProcesses) {
  const TopModel remote = TwoHosts();
  ViewState st;
  const Drawn d = Draw(remote, st, 120, 40);
  EXPECT_THAT(d.canvas.Line(39), HasSubstr("q quit"));
  EXPECT_THAT(d.canvas.Line(39), ::testing::Not(HasSubstr("T/K/I")));
  ViewState local;
  EXPECT_THAT(Draw(DemoModel(), local, 120, 40).canvas.Line(39), HasSubstr("T/K/I signal"));
}

TEST(TopFleet, ADownHostsGpusSayStaleBeforeAnythingThatMayBeCut) {
  TopModel m = TwoHosts();
  m.hosts.back().state.down = "connection refused";
  ViewState st;
  st.tab = 2;  // the down host's own tab
  const Drawn d = Draw(m, st, 120, 40);
  int stale = 0;
  for (int y = 0; y < 40; ++y) {
    const std::string line = d.canvas.Line(y);
    if (line.find("STALE") == std::string::npos) continue;
    ++stale;
    const auto thr = line.find("THR");
    if (thr != std::string::npos) {
      EXPECT_LT(line.find("STALE"), thr) << line;
    }
  }
  EXPECT_GE(stale, 8) << d.canvas.Text();  // each of its 8 GPUs (and MIG instances)
}

TEST(TopFleet, TheHostColumnSortsByNameAndProcsByCount) {
  TopModel m = TwoHosts();
  ViewState st;
  st.fleet_sort = FleetColumn::kHost;
  st.fleet_reverse = true;
  Drawn d = Draw(m, st, 120, 40);
  EXPECT_EQ(FleetColumnText(d, FleetColumn::kHost).front(), "node-b:9835");
  EXPECT_EQ(FleetColumnText(d, FleetColumn::kHost).back(), "node-a:9835");
  st.fleet_sort = FleetColumn::kProcs;
  d = Draw(m, st, 120, 40);
  const auto procs = Numbers(FleetColumnText(d, FleetColumn::kProcs));
  EXPECT_TRUE(std::is_sorted(procs.rbegin(), procs.rend()));
  EXPECT_GT(procs.front(), procs.back());
}

}  // namespace
}  // namespace gpuwatch::tui
