#include "tui/app.h"

#include <fmt/format.h>
#include <malloc.h>
#include <unistd.h>

#include "tui/process_actions.h"
#include "tui/terminal.h"

namespace gpuwatch::tui {
namespace {

// Sends the confirmed signal; the status line says what happened.
std::string Deliver(const Action& a, const std::filesystem::path& proc_dir) {
  int sent = 0;
  std::string failures;
  for (const ProcessKey& key : a.targets) {
    const Status s = SendSignal(proc_dir, key, a.signal);
    if (s.ok()) {
      ++sent;
    } else {
      failures += (failures.empty() ? "" : "; ") + s.message();
    }
  }
  std::string text =
      fmt::format("sent {} to {} process{}", SignalName(a.signal), sent, sent == 1 ? "" : "es");
  if (!failures.empty()) text += "; not sent: " + failures;
  return text;
}

}  // namespace

Result<int> RunTop(Feed& feed, const AppOptions& options, const std::function<int()>& stop) {
  const bool unicode = !options.ascii && LocaleIsUtf8();
  auto terminal = Terminal::Open(options.theme, options.mouse);
  if (!terminal) return terminal.error();
  ViewState state;
  state.readonly = options.readonly;
  state.unicode = unicode;
  KeyContext context;
  context.uid = static_cast<std::uint32_t>(geteuid());
  Layout layout;
  std::uint64_t drawn_version = ~0ULL;
  bool dirty = true;
  // Read from /proc for the view: once per model version, and only when shown.
  std::optional<Families> families;
  std::optional<ProcessDetails> details;
  std::optional<ProcessKey> details_of;
  std::uint64_t read_version = ~0ULL;
  for (;;) {
    if (const int code = stop ? stop() : 0; code != 0) return code;
    const std::uint64_t version = feed.version();
    if (version != drawn_version) dirty = true;
    if (dirty) {
      bool local = false;
      feed.Read([&](const TopModel& m) { local = m.local(); });
      if (local && (version != read_version || details_of != state.selected)) {
        families = state.tree ? std::optional(ReadFamilies(options.proc_dir)) : std::nullopt;
        const bool wants_details =
            (state.screen == Screen::kProcess || state.screen == Screen::kEnvironment) &&
            state.selected;
        details = wants_details
                      ? std::optional(ReadDetails(options.proc_dir, *state.selected, context.uid))
                      : std::nullopt;
        details_of = state.selected;
        read_version = version;
      }
      Canvas canvas((*terminal)->width(), (*terminal)->height());
      feed.Read([&](const TopModel& m) {
        RenderInput in{m, state, families ? &*families : nullptr, details ? &*details : nullptr,
                       std::chrono::system_clock::now()};
        layout = Render(in, canvas);
      });
      (*terminal)->Show(canvas);
      drawn_version = version;
      dirty = false;
      // A view kept open all day: the pages of what the start and this round
      // freed go back to the system, not only those at the heap's top (a few
      // system calls a round).
      malloc_trim(0);
    }
    std::optional<Mouse> mouse;
    const int key = (*terminal)->NextKey(std::chrono::milliseconds(200), mouse);
    if (key == kKeyNone && !mouse) continue;
    const Screen before = state.screen;
    const bool tree_before = state.tree;
    Action action;
    feed.Read([&](const TopModel& m) {
      action =
          mouse ? HandleMouse(*mouse, state, m, layout) : HandleKey(key, state, m, layout, context);
    });
    if (state.screen != before || state.tree != tree_before) read_version = ~0ULL;
    dirty = true;
    switch (action.kind) {
      case Action::Kind::kQuit:
        return 0;
      case Action::Kind::kSignal:
        state.message = Deliver(action, options.proc_dir);
        break;
      case Action::Kind::kPause:
      case Action::Kind::kSeek:
      case Action::Kind::kSpeed:
        feed.Act(action);
        break;
      case Action::Kind::kNone:
        break;
    }
  }
}

}  // namespace gpuwatch::tui
