// What a key or a mouse click does to the view state, and what it asks of
// the caller (quit, send a signal, move a replay). Pure: the terminal
// (terminal.h) turns ncurses' codes into these keys.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tui/model.h"
#include "tui/view.h"
#include "tui/view_state.h"

namespace gpuwatch::tui {

// Printable keys are their character; these are the rest.
enum Key : int {
  kKeyNone = -1,
  kKeyUp = 0x10000,
  kKeyDown,
  kKeyLeft,
  kKeyRight,
  kKeyPageUp,
  kKeyPageDown,
  kKeyHome,
  kKeyEnd,
  kKeyEnter,
  kKeyEscape,
  kKeyBackspace,
  kKeyTab,
  kKeyBackTab,
  kKeyResize,
  kKeyCtrlC,
};

struct Mouse {
  int x = 0;
  int y = 0;
  enum class Button { kLeft, kWheelUp, kWheelDown } button = Button::kLeft;
};

struct Action {
  enum class Kind { kNone, kQuit, kSignal, kPause, kSeek, kSpeed } kind = Kind::kNone;
  int signal = 0;
  std::vector<ProcessKey> targets;
  double seek_s = 0;        // kSeek: seconds of recording time (negative: back)
  double speed_factor = 1;  // kSpeed: multiply the replay speed by this
};

// Who is asking (for the signal rules): the caller's effective uid.
struct KeyContext {
  std::uint32_t uid = 0;
};

Action HandleKey(int key, ViewState& state, const TopModel& model, const Layout& layout,
                 const KeyContext& context);
Action HandleMouse(const Mouse& mouse, ViewState& state, const TopModel& model,
                   const Layout& layout);

}  // namespace gpuwatch::tui
