#include "tui/terminal.h"

#include <curses.h>
#include <langinfo.h>
#include <unistd.h>

#include <clocale>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gpuwatch::tui {
namespace {

// Colour pairs by style; pair n is style n + 1.
struct Look {
  short fg;
  short bg;
  attr_t attr;
};

Look LookOf(Theme theme, Style s) {
  const bool light = theme == Theme::kLight;
  switch (s) {
    case Style::kNormal:
      return {-1, -1, A_NORMAL};
    case Style::kDim:
      return {static_cast<short>(light ? COLOR_BLUE : COLOR_WHITE), -1,
              static_cast<attr_t>(light ? A_NORMAL : A_DIM)};
    case Style::kBold:
      return {-1, -1, A_BOLD};
    case Style::kHeader:
      return {COLOR_WHITE, COLOR_BLUE, A_BOLD};
    case Style::kOk:
      return {COLOR_GREEN, -1, A_NORMAL};
    case Style::kWarn:
      return {static_cast<short>(light ? COLOR_MAGENTA : COLOR_YELLOW), -1, A_BOLD};
    case Style::kBad:
      return {COLOR_RED, -1, A_BOLD};
    case Style::kSelected:
      return {COLOR_BLACK, COLOR_CYAN, A_NORMAL};
    case Style::kTagged:
      return {COLOR_MAGENTA, -1, A_BOLD};
    case Style::kBarUsed:
      return {COLOR_GREEN, -1, A_NORMAL};
    case Style::kBarReserved:
      return {COLOR_BLUE, -1, A_NORMAL};
    case Style::kBarFree:
      return {static_cast<short>(light ? COLOR_BLACK : COLOR_WHITE), -1, A_DIM};
    case Style::kChart:
      return {COLOR_CYAN, -1, A_NORMAL};
    case Style::kBanner:
      return {COLOR_BLACK, COLOR_YELLOW, A_BOLD};
  }
  return {-1, -1, A_NORMAL};
}

// Mono: attributes only.
attr_t MonoAttr(Style s) {
  switch (s) {
    case Style::kDim:
    case Style::kBarFree:
      return A_DIM;
    case Style::kBold:
    case Style::kWarn:
    case Style::kTagged:
      return A_BOLD;
    case Style::kBad:
      return A_BOLD | A_UNDERLINE;
    case Style::kHeader:
    case Style::kSelected:
      return A_REVERSE;
    case Style::kBanner:
      return A_REVERSE | A_BOLD;
    default:
      return A_NORMAL;
  }
}

int MapKey(int c) {
  switch (c) {
    case KEY_UP:
      return kKeyUp;
    case KEY_DOWN:
      return kKeyDown;
    case KEY_LEFT:
      return kKeyLeft;
    case KEY_RIGHT:
      return kKeyRight;
    case KEY_PPAGE:
      return kKeyPageUp;
    case KEY_NPAGE:
      return kKeyPageDown;
    case KEY_HOME:
      return kKeyHome;
    case KEY_END:
      return kKeyEnd;
    case KEY_ENTER:
    case '\n':
    case '\r':
      return kKeyEnter;
    case 27:
      return kKeyEscape;
    case KEY_BACKSPACE:
    case 127:
    case 8:
      return kKeyBackspace;
    case '\t':
      return kKeyTab;
    case KEY_BTAB:
      return kKeyBackTab;
    case KEY_RESIZE:
      return kKeyResize;
    case 3:
      return kKeyCtrlC;
    default:
      return c;
  }
}

}  // namespace

std::optional<std::string> TerminalProblem() {
  const char* term = std::getenv("TERM");
  if (term == nullptr || *term == '\0') return "TERM is not set";
  if (std::strcmp(term, "dumb") == 0) return "TERM=dumb cannot draw a full-screen view";
  if (isatty(STDIN_FILENO) == 0 || isatty(STDOUT_FILENO) == 0) return "not a terminal";
  return std::nullopt;
}

// Only the character type comes from the environment: it is what the terminal
// draws with; numbers, times and collation stay C's, so that no number top
// parses or prints changes with the user's locale.
bool LocaleIsUtf8() {
  std::setlocale(LC_CTYPE, "");
  const char* set = nl_langinfo(CODESET);
  return set != nullptr && (std::strcmp(set, "UTF-8") == 0 || std::strcmp(set, "utf8") == 0);
}

Terminal::Terminal(Theme theme) : theme_(theme) {}

Result<std::unique_ptr<Terminal>> Terminal::Open(Theme theme, bool mouse) {
  if (auto problem = TerminalProblem()) return Status::Unavailable(*problem);
  std::setlocale(LC_CTYPE, "");
  if (newterm(nullptr, stdout, stdin) == nullptr) {
    return Status::Unavailable(std::string("this terminal (TERM=") + std::getenv("TERM") +
                               ") is not in the terminfo database");
  }
  raw();  // Ctrl-C is a key: the terminal is always given back in order
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  set_escdelay(25);
  leaveok(stdscr, TRUE);
  scrollok(stdscr, FALSE);
  if (mouse)
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, nullptr);
  if (theme != Theme::kMono && has_colors()) {
    start_color();
    use_default_colors();
    for (int s = 0; s < kStyleCount; ++s) {
      const Look look = LookOf(theme, static_cast<Style>(s));
      init_pair(static_cast<short>(s + 1), look.fg, look.bg);
    }
  } else {
    theme = Theme::kMono;
  }
  return std::unique_ptr<Terminal>(new Terminal(theme));
}

Terminal::~Terminal() { endwin(); }

int Terminal::width() const { return COLS; }
int Terminal::height() const { return LINES; }

void Terminal::Show(const Canvas& canvas) {
  const bool all =
      !shown_ || shown_->width() != canvas.width() || shown_->height() != canvas.height();
  if (shown_ && !all && *shown_ == canvas) return;
  if (all) clearok(stdscr, TRUE);
  for (int y = 0; y < canvas.height(); ++y) {
    for (int x = 0; x < canvas.width(); ++x) {
      const Cell& cell = canvas.At(x, y);
      if (!all && shown_->At(x, y) == cell) continue;
      if (theme_ == Theme::kMono) {
        attrset(MonoAttr(cell.style));
      } else {
        const int s = static_cast<int>(cell.style);
        attrset(LookOf(theme_, cell.style).attr | COLOR_PAIR(s + 1));
      }
      mvaddstr(y, x, cell.text());
    }
  }
  attrset(A_NORMAL);
  refresh();
  shown_ = canvas;
}

int Terminal::NextKey(std::chrono::milliseconds timeout, std::optional<Mouse>& mouse) {
  mouse.reset();
  wtimeout(stdscr, static_cast<int>(timeout.count()));
  const int c = wgetch(stdscr);
  if (c == ERR) return kKeyNone;
  if (c == KEY_MOUSE) {
    MEVENT e;
    if (getmouse(&e) != OK) return kKeyNone;
    Mouse m;
    m.x = e.x;
    m.y = e.y;
    if ((e.bstate & BUTTON4_PRESSED) != 0) {
      m.button = Mouse::Button::kWheelUp;
    } else if ((e.bstate & BUTTON5_PRESSED) != 0) {
      m.button = Mouse::Button::kWheelDown;
    }
    mouse = m;
    return kKeyNone;
  }
  if (c == KEY_RESIZE) shown_.reset();
  return MapKey(c);
}

}  // namespace gpuwatch::tui
