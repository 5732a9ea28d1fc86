// The cells of a screen: one code point each, held inline (tui/canvas.h).
#include "tui/canvas.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuwatch::tui {
namespace {

TEST(Canvas, HoldsACodePointOfOneToFourBytesACell) {
  Canvas c(8, 2);
  EXPECT_EQ(c.Put(0, 0, "a\xC3\xA9\xE2\x96\x88\xF0\x9F\x98\x80z", Style::kBold), 5);
  EXPECT_EQ(c.Line(0), "a\xC3\xA9\xE2\x96\x88\xF0\x9F\x98\x80z");
  EXPECT_EQ(std::string(c.At(3, 0).text()), "\xF0\x9F\x98\x80");
  EXPECT_EQ(c.At(3, 0).style, Style::kBold);
  EXPECT_EQ(std::string(c.At(5, 0).text()), " ") << "an untouched cell is blank";
  EXPECT_EQ(c.Line(1), "");
}

TEST(Canvas, ShowsMalformedAndControlBytesAsQuestionMarks) {
  Canvas c(10, 1);
  // A stray continuation byte, a cut sequence, a control character and a
  // lead byte followed by plain ASCII.
  EXPECT_EQ(c.Put(0, 0, "\x80x\tz\xE2\x96y\xC3"), 8);
  EXPECT_EQ(c.Line(0), "?x?z??y?");
}

TEST(Canvas, ACellOverwrittenByAShorterCodePointKeepsNoTrailingBytes) {
  Canvas a(2, 1), b(2, 1);
  a.Put(0, 0, "\xF0\x9F\x98\x80");
  a.Put(0, 0, "x");
  b.Put(0, 0, "x");
  EXPECT_EQ(a.Line(0), "x");
  EXPECT_TRUE(a == b) << "equal cells compare equal: the terminal redraws only what changed";
}

TEST(Canvas, FitCutsByCodePoint) {
  EXPECT_EQ(Fit("\xE2\x96\x88\xE2\x96\x88\xE2\x96\x88", 2, true), "\xE2\x96\x88\xE2\x80\xA6");
  EXPECT_EQ(Fit("abc", 2, false), "a~");
  EXPECT_EQ(Columns("a\xF0\x9F\x98\x80"), 2);
}

}  // namespace
}  // namespace gpuwatch::tui
