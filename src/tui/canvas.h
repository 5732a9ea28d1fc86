// A screen as cells: what the view draws and the terminal shows. Pure; the
// view never talks to ncurses, so every screen can be tested as text.
// A cell holds one column-wide character (UTF-8) and a style; wide
// characters are not used (the glyphs are chosen one column wide, and text
// from processes is cut by code point).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuwatch::tui {

// What a cell means; the theme (terminal.cc) maps it to colours.
enum class Style : std::uint8_t {
  kNormal,
  kDim,       // labels, absent values
  kBold,      // names
  kHeader,    // the title bar and table header
  kOk,        // within limits
  kWarn,      // approaching a limit (memory > 75 %, 70 °C, throttled)
  kBad,       // at a limit (memory > 90 %, 80 °C, lost, down)
  kSelected,  // the selected row
  kTagged,    // a tagged process
  kBarUsed,   // memory bar: used
  kBarReserved,
  kBarFree,
  kChart,
  kBanner,  // DEMO / REPLAY
};
inline constexpr int kStyleCount = static_cast<int>(Style::kBanner) + 1;

// One code point as UTF-8, NUL-terminated and NUL-padded: a cell holds it
// without an allocation (6 bytes a cell, against 40 with a std::string).
using Glyph = std::array<char, 5>;

struct Cell {
  Glyph glyph = {' '};
  Style style = Style::kNormal;
  const char* text() const { return glyph.data(); }
  friend bool operator==(const Cell&, const Cell&) = default;
};

class Canvas {
 public:
  Canvas(int width, int height);

  int width() const { return width_; }
  int height() const { return height_; }
  // Writes `text` from column x of row y, one code point a cell, clipped to
  // `max_width` columns (-1: to the edge). Control characters show as '?'.
  // Returns the columns written.
  int Put(int x, int y, std::string_view text, Style style = Style::kNormal, int max_width = -1);
  // Sets the style of cells [x, x + n) of row y, keeping their glyphs.
  void Restyle(int x, int y, int n, Style style);
  const Cell& At(int x, int y) const { return cells_[static_cast<std::size_t>(y * width_ + x)]; }
  // Row y as text (trailing spaces dropped), for tests and golden screens.
  std::string Line(int y) const;
  std::string Text() const;  // every row, '\n' after each
  friend bool operator==(const Canvas&, const Canvas&) = default;

 private:
  int width_;
  int height_;
  std::vector<Cell> cells_;
};

// Code points in `text` (what Put would take), and `text` cut to at most
// `n` of them, with "…" (or "~" in ASCII) as the last when cut.
int Columns(std::string_view text);
std::string Fit(std::string_view text, int n, bool unicode);
// `text` in lines of at most `n` code points, broken at spaces (a longer
// word is cut), at most `max_lines` of them: the last Fit with "…" when
// more was left.
std::vector<std::string> Wrap(std::string_view text, int n, int max_lines, bool unicode);

}  // namespace gpuwatch::tui
