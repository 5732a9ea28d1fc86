#include "core/printable.h"

#include <gtest/gtest.h>

namespace gpuwatch {
namespace {

TEST(Printable, WritesOutControlCharactersAndKeepsTheRest) {
  EXPECT_EQ(Printable("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(Printable("python -c 'a\nb'\r\t"), "python -c 'a\\nb'\\r\\t");
  EXPECT_EQ(Printable(std::string("nul\0del\x7f", 8)), "nul\\x00del\\x7f");
  EXPECT_EQ(Printable("\xc2\x9b"
                      "2J"),
            "\\u009b2J")
      << "C1 CSI in UTF-8";
  EXPECT_EQ(Printable("85°C ✓ C:\\dir é"), "85°C ✓ C:\\dir é") << "UTF-8 and backslashes stay";
  EXPECT_EQ(Printable(""), "");
}

TEST(TrimBlanks, DropsSpacesTabsAndLineEndsAtBothEndsOnly) {
  EXPECT_EQ(TrimBlanks("\t a  b \r\n"), "a  b");
  EXPECT_EQ(TrimBlanks("a"), "a");
  EXPECT_EQ(TrimBlanks(" \t\r\n "), "");
  EXPECT_EQ(TrimBlanks(""), "");
  EXPECT_EQ(TrimBlanks("x\vy\f"), "x\vy\f");  // other controls are content
}

}  // namespace
}  // namespace gpuwatch
