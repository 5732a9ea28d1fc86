#include "tui/keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>

namespace gpuwatch::tui {
namespace {

constexpr int Ctrl(char c) { return c & 0x1F; }

Action Do(Action::Kind kind) {
  Action a;
  a.kind = kind;
  return a;
}

int SelectedIndex(const ViewState& st, const Layout& layout) {
  for (std::size_t i = 0; i < layout.rows.size(); ++i) {
    if (st.selected && layout.rows[i].key == *st.selected) return static_cast<int>(i);
  }
  return -1;
}

void MoveTo(ViewState& st, const Layout& layout, int index) {
  if (layout.rows.empty()) return;
  index = std::clamp(index, 0, static_cast<int>(layout.rows.size()) - 1);
  st.selected = layout.rows[static_cast<std::size_t>(index)].key;
}

bool FleetTab(const ViewState& st, const TopModel& m) { return m.hosts.size() > 1 && st.tab == 0; }

void Move(ViewState& st, const TopModel& m, const Layout& layout, int by) {
  if (st.screen == Screen::kHelp || st.screen == Screen::kEnvironment) {
    st.help_scroll = std::max(0, st.help_scroll + by);
    return;
  }
  if (FleetTab(st, m)) {
    st.fleet_row = std::clamp(st.fleet_row + by, 0, std::max(0, layout.fleet_rows - 1));
    return;
  }
  MoveTo(st, layout, SelectedIndex(st, layout) + by);
}

// The processes a signal goes to: the tagged ones still shown, else the
// selected one. Refused (with the reason in the message) when a target is
// not the caller's, unless the caller is root, who confirms twice.
Action AskSignal(int signal, ViewState& st, const TopModel& m, const Layout& layout,
                 const KeyContext& ctx) {
  if (st.readonly) {
    st.message = "--readonly: signals are off";
    return {};
  }
  if (!m.local()) {
    st.message = "signals go only to this machine's processes (not to a replay or a remote host)";
    return {};
  }
  std::vector<const ProcessRow*> targets;
  for (const ProcessRow& r : layout.rows) {
    if (r.is_process && st.tagged.count(r.key) != 0 &&
        std::none_of(targets.begin(), targets.end(), [&](auto* t) { return t->key == r.key; })) {
      targets.push_back(&r);
    }
  }
  if (targets.empty()) {
    const int i = SelectedIndex(st, layout);
    if (i >= 0 && layout.rows[static_cast<std::size_t>(i)].is_process) {
      targets.push_back(&layout.rows[static_cast<std::size_t>(i)]);
    }
  }
  if (targets.empty()) {
    st.message = "no process selected";
    return {};
  }
  bool others = false;
  for (const ProcessRow* t : targets) {
    const auto uid = t->sample->host.uid;
    if (uid && *uid == ctx.uid) continue;
    if (ctx.uid != 0) {
      st.message = fmt::format("not yours: pid {} belongs to {}; nothing sent", t->key.pid,
                               t->user.empty() ? "another user" : t->user);
      return {};
    }
    others = true;
  }
  PendingSignal p;
  p.signal = signal;
  for (const ProcessRow* t : targets) p.targets.push_back(t->key);
  p.confirmations_needed = others ? 2 : 1;
  st.pending = std::move(p);
  st.message.clear();
  return {};
}

Action Confirm(int key, ViewState& st) {
  if (key == 'y' || key == 'Y') {
    if (--st.pending->confirmations_needed > 0) return {};
    Action a;
    a.kind = Action::Kind::kSignal;
    a.signal = st.pending->signal;
    a.targets = st.pending->targets;
    st.pending.reset();
    return a;
  }
  st.pending.reset();
  st.message = "cancelled: nothing sent";
  return {};
}

Action EditFilter(int key, ViewState& st) {
  if (key == kKeyEnter) {
    st.editing_filter = false;
  } else if (key == kKeyEscape) {
    st.editing_filter = false;
    st.filter.clear();
  } else if (key == kKeyBackspace) {
    if (!st.filter.empty()) st.filter.pop_back();
  } else if (key == Ctrl('u')) {
    st.filter.clear();
  } else if (key >= 0x20 && key < 0x7F) {
    st.filter += static_cast<char>(key);
  }
  st.scroll = 0;
  return {};
}

void SortBy(ViewState& st, Column c) {
  if (st.sort == c) {
    st.reverse = !st.reverse;
  } else {
    st.sort = c;
    // Numbers largest first; names and text A to Z.
    st.reverse = !(c == Column::kUser || c == Column::kCommand || c == Column::kWhere ||
                   c == Column::kLease || c == Column::kPid || c == Column::kGpu);
  }
}

void SortFleetBy(ViewState& st, FleetColumn c) {
  if (st.fleet_sort == c) {
    st.fleet_reverse = !st.fleet_reverse;
  } else {
    st.fleet_sort = c;
    // Numbers largest first, except the GPU index; names A to Z.
    st.fleet_reverse =
        !(c == FleetColumn::kHost || c == FleetColumn::kName || c == FleetColumn::kGpu);
  }
}

// `<` `>`: the next column of the process table, or of the fleet overview.
void NextSort(ViewState& st, const TopModel& m, int by) {
  if (FleetTab(st, m)) {
    const int c = (static_cast<int>(st.fleet_sort) + by + kFleetColumnCount) % kFleetColumnCount;
    SortFleetBy(st, static_cast<FleetColumn>(c));
    return;
  }
  const int c = (static_cast<int>(st.sort) + by + kColumnCount) % kColumnCount;
  SortBy(st, static_cast<Column>(c));
}

}  // namespace

std::string SignalName(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGKILL:
      return "SIGKILL";
    case SIGINT:
      return "SIGINT";
    default:
      return fmt::format("signal {}", signal);
  }
}

Action HandleKey(int key, ViewState& st, const TopModel& m, const Layout& layout,
                 const KeyContext& ctx) {
  if (key == kKeyResize || key == kKeyNone) return {};
  if (key == kKeyCtrlC) return Do(Action::Kind::kQuit);
  if (st.pending) return Confirm(key, st);
  if (st.editing_filter) return EditFilter(key, st);
  st.message.clear();
  const int tabs = m.hosts.size() > 1 ? static_cast<int>(m.hosts.size()) + 1 : 1;
  switch (key) {
    case 'q':
      if (st.screen != Screen::kMain) {
        st.screen = Screen::kMain;
        return {};
      }
      return Do(Action::Kind::kQuit);
    case 'h':
    case '?':
      st.screen = st.screen == Screen::kHelp ? Screen::kMain : Screen::kHelp;
      st.help_scroll = 0;
      return {};
    case kKeyEscape:
    case kKeyBackspace:
      if (st.screen == Screen::kEnvironment) {
        st.screen = Screen::kProcess;
      } else if (st.screen != Screen::kMain) {
        st.screen = Screen::kMain;
      } else {
        st.filter.clear();
      }
      return {};
    case kKeyUp:
    case 'k':
      Move(st, m, layout, -1);
      return {};
    case kKeyDown:
    case 'j':
      Move(st, m, layout, 1);
      return {};
    case kKeyPageUp:
    case Ctrl('b'):
      Move(st, m, layout, -layout.page);
      return {};
    case kKeyPageDown:
    case Ctrl('f'):
      Move(st, m, layout, layout.page);
      return {};
    case kKeyHome:
    case 'g':
      Move(st, m, layout, -1'000'000);
      return {};
    case kKeyEnd:
    case 'G':
      Move(st, m, layout, 1'000'000);
      return {};
    case kKeyTab:
      st.tab = (st.tab + 1) % tabs;
      st.screen = Screen::kMain;
      return {};
    case kKeyBackTab:
      st.tab = (st.tab + tabs - 1) % tabs;
      st.screen = Screen::kMain;
      return {};
    case kKeyEnter:
      if (FleetTab(st, m)) {
        st.message = "Tab shows each host; Enter on a process opens its view";
        return {};
      }
      if (st.selected) st.screen = Screen::kProcess;
      return {};
    case 'e':
      if (st.screen == Screen::kProcess) {
        st.screen = Screen::kEnvironment;
        st.help_scroll = 0;
      }
      return {};
    case ' ':
      if (st.selected) {
        if (!st.tagged.erase(*st.selected)) st.tagged.insert(*st.selected);
        Move(st, m, layout, 1);
      }
      return {};
    case 'a':
      for (const ProcessRow& r : layout.rows) {
        if (r.is_process) st.tagged.insert(r.key);
      }
      return {};
    case 'u':
      st.tagged.clear();
      return {};
    case '<':
    case '>':
      NextSort(st, m, key == '>' ? 1 : -1);
      return {};
    case 'r':
      if (FleetTab(st, m)) {
        st.fleet_reverse = !st.fleet_reverse;
      } else {
        st.reverse = !st.reverse;
      }
      return {};
    case '/':
      st.editing_filter = true;
      return {};
    case 't':
      st.tree = !st.tree;
      if (st.tree && !m.local())
        st.message = "tree: parents are known for this machine's processes only";
      return {};
    case 'w':
      st.chart_window = (st.chart_window + 1) % static_cast<int>(std::size(kChartWindows));
      return {};
    case 'T':
      return AskSignal(SIGTERM, st, m, layout, ctx);
    case 'K':
      return AskSignal(SIGKILL, st, m, layout, ctx);
    case 'I':
      return AskSignal(SIGINT, st, m, layout, ctx);
    case 'p':
      if (m.replay) return Do(Action::Kind::kPause);
      return {};
    case '[':
    case ']':
    case '{':
    case '}':
      if (!m.replay) return {};
      {
        Action a = Do(Action::Kind::kSeek);
        a.seek_s = (key == '[' || key == '{' ? -1.0 : 1.0) * (key == '{' || key == '}' ? 600 : 60);
        return a;
      }
    case '+':
    case '=':
    case '-':
      if (!m.replay) return {};
      {
        Action a = Do(Action::Kind::kSpeed);
        a.speed_factor = key == '-' ? 0.5 : 2.0;
        return a;
      }
    default:
      if (key >= '0' && key <= '9') {
        st.chart_gpu = key - '0';
        return {};
      }
      return {};
  }
}

Action HandleMouse(const Mouse& mouse, ViewState& st, const TopModel& m, const Layout& layout) {
  if (st.pending || st.editing_filter) return {};
  if (mouse.button == Mouse::Button::kWheelUp || mouse.button == Mouse::Button::kWheelDown) {
    Move(st, m, layout, mouse.button == Mouse::Button::kWheelUp ? -3 : 3);
    return {};
  }
  if (mouse.y == layout.tabs_y) {
    for (const Layout::Span& s : layout.tabs) {
      if (mouse.x >= s.x0 && mouse.x < s.x1) {
        st.tab = s.value;
        st.screen = Screen::kMain;
      }
    }
    return {};
  }
  if (st.screen != Screen::kMain) return {};
  if (mouse.y == layout.header_y) {
    for (const Layout::Span& s : layout.header) {
      if (mouse.x < s.x0 || mouse.x >= s.x1) continue;
      if (FleetTab(st, m)) {
        SortFleetBy(st, static_cast<FleetColumn>(s.value));
      } else {
        SortBy(st, static_cast<Column>(s.value));
      }
    }
    return {};
  }
  if (FleetTab(st, m) && layout.fleet_y >= 0 && mouse.y >= layout.fleet_y) {
    st.fleet_row = std::clamp(mouse.y - layout.fleet_y, 0, std::max(0, layout.fleet_rows - 1));
    return {};
  }
  if (layout.table_y >= 0 && mouse.y >= layout.table_y &&
      mouse.y < layout.table_y + layout.table_rows) {
    const int i = st.scroll + (mouse.y - layout.table_y);
    if (i < static_cast<int>(layout.rows.size())) MoveTo(st, layout, i);
  }
  return {};
}

}  // namespace gpuwatch::tui
