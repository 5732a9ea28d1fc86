// The terminal under `top`: ncurses in, cells out. Shows a Canvas by
// writing only the cells that changed since the last one shown (nothing at
// all when none did), maps ncurses' key and mouse codes to keys.h's, and
// colours each Style as the theme says.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "gpuwatch/status.h"
#include "tui/canvas.h"
#include "tui/keys.h"
#include "tui/view_state.h"

namespace gpuwatch::tui {

// Why top cannot draw here (TERM unset or dumb, no terminal on stdin or
// stdout), or nothing.
std::optional<std::string> TerminalProblem();

// Whether the locale's character set is UTF-8 (else the ASCII glyphs).
bool LocaleIsUtf8();

class Terminal {
 public:
  // Takes the screen (ncurses initscr); gives it back when destroyed.
  static Result<std::unique_ptr<Terminal>> Open(Theme theme, bool mouse);
  ~Terminal();
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  int width() const;
  int height() const;
  // Writes the cells of `canvas` that differ from those shown last.
  void Show(const Canvas& canvas);
  // The next key, or kKeyNone after `timeout`; a mouse event sets `mouse`.
  int NextKey(std::chrono::milliseconds timeout, std::optional<Mouse>& mouse);

 private:
  explicit Terminal(Theme theme);
  Theme theme_;
  std::optional<Canvas> shown_;
};

}  // namespace gpuwatch::tui
