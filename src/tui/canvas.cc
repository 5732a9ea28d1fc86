#include "tui/canvas.h"

#include <algorithm>

namespace gpuwatch::tui {
namespace {

// The length of the UTF-8 sequence that starts with `c` (1 for a stray byte).
std::size_t SequenceLength(unsigned char c) {
  if (c >= 0xF0 && c < 0xF8) return 4;
  if (c >= 0xE0) return c < 0xF0 ? 3 : 1;
  if (c >= 0xC0) return 2;
  return 1;
}

// Splits off the next code point of `text` from `i`; malformed bytes come
// out as '?'.
Glyph NextGlyph(std::string_view text, std::size_t& i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const std::size_t n = SequenceLength(c);
  if (n == 1) {
    ++i;
    if (c < 0x20 || c == 0x7F || c >= 0x80) return {'?'};
    return {static_cast<char>(c)};
  }
  if (i + n > text.size()) {
    i = text.size();
    return {'?'};
  }
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) {
      ++i;
      return {'?'};
    }
  }
  Glyph glyph{};
  text.copy(glyph.data(), n, i);
  i += n;
  return glyph;
}

}  // namespace

Canvas::Canvas(int width, int height)
    : width_(std::max(0, width)),
      height_(std::max(0, height)),
      cells_(static_cast<std::size_t>(width_ * height_)) {}

int Canvas::Put(int x, int y, std::string_view text, Style style, int max_width) {
  if (y < 0 || y >= height_ || x >= width_) return 0;
  const int limit = max_width < 0 ? width_ - x : std::min(max_width, width_ - x);
  int written = 0;
  std::size_t i = 0;
  while (i < text.size() && written < limit) {
    const Glyph glyph = NextGlyph(text, i);
    const int col = x + written;
    if (col >= 0) {
      Cell& cell = cells_[static_cast<std::size_t>(y * width_ + col)];
      cell.glyph = glyph;
      cell.style = style;
    }
    ++written;
  }
  return written;
}

void Canvas::Restyle(int x, int y, int n, Style style) {
  if (y < 0 || y >= height_) return;
  for (int col = std::max(0, x); col < std::min(width_, x + n); ++col) {
    cells_[static_cast<std::size_t>(y * width_ + col)].style = style;
  }
}

std::string Canvas::Line(int y) const {
  std::string out;
  for (int x = 0; x < width_; ++x) out += At(x, y).text();
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string Canvas::Text() const {
  std::string out;
  for (int y = 0; y < height_; ++y) out += Line(y) + "\n";
  return out;
}

int Columns(std::string_view text) {
  int n = 0;
  for (std::size_t i = 0; i < text.size(); ++n) NextGlyph(text, i);
  return n;
}

std::string Fit(std::string_view text, int n, bool unicode) {
  if (n <= 0) return "";
  if (Columns(text) <= n) return std::string(text);
  std::string out;
  std::size_t i = 0;
  for (int k = 0; k < n - 1 && i < text.size(); ++k) out += NextGlyph(text, i).data();
  return out + (unicode ? "…" : "~");
}

std::vector<std::string> Wrap(std::string_view text, int n, int max_lines, bool unicode) {
  std::vector<std::string> lines;
  if (n <= 0 || max_lines <= 0) return lines;
  while (!text.empty() && static_cast<int>(lines.size()) < max_lines) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (text.empty()) break;
    // The byte where n code points end, and the last space within them.
    std::size_t end = 0, space = std::string_view::npos;
    for (int k = 0; k < n && end < text.size(); ++k) {
      if (text[end] == ' ') space = end;
      NextGlyph(text, end);
    }
    std::size_t cut = end;
    if (end < text.size() && text[end] != ' ' && space != std::string_view::npos && space > 0) {
      cut = space;
    }
    if (static_cast<int>(lines.size()) + 1 == max_lines && cut < text.size()) {
      lines.push_back(Fit(text, n, unicode));
      break;
    }
    lines.emplace_back(text.substr(0, cut));
    text.remove_prefix(cut);
  }
  return lines;
}

}  // namespace gpuwatch::tui
