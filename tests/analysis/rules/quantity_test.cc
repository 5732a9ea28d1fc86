#include "analysis/rules/quantity.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpuwatch::rules {
namespace {

TEST(Quantity, PercentIsARatio) {
  Result<double> v = ParseQuantity("90%", Unit::kRatio);
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_DOUBLE_EQ(*v, 0.9);
}

TEST(Quantity, PlainRatioAboveOneIsAnErrorThatSuggestsPercent) {
  Result<double> v = ParseQuantity("90", Unit::kRatio);
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message().find("90%"), std::string::npos) << v.error().message();
}

TEST(Quantity, BinaryAndDecimalByteSuffixes) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("8GiB", Unit::kBytes), 8.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*ParseQuantity("500MB", Unit::kBytes), 500e6);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1024", Unit::kBytes), 1024);
}

TEST(Quantity, SizesBeyond64BitBytesAreErrors) {
  for (const char* big :
       {"100000000000000000000000000GiB", "18446744073709551616B", "20000000000GB/s"}) {
    const Unit unit = std::string_view(big).ends_with("/s") ? Unit::kBytesPerSecond : Unit::kBytes;
    Result<double> v = ParseQuantity(big, unit);
    ASSERT_FALSE(v) << big;
    EXPECT_EQ(v.error().message(),
              fmt::format("'{}' is too large: a size is at most 16 EiB (64-bit bytes)", big));
  }
  EXPECT_FALSE(ParseQuantity("1e26GiB", Unit::kBytes)) << "no exponents";
  EXPECT_DOUBLE_EQ(*ParseQuantity("18000000TB", Unit::kBytes), 18e18) << "just below 2^64";
}

TEST(Quantity, TemperaturePowerAndClockSuffixes) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("80", Unit::kCelsius), 80);
  EXPECT_DOUBLE_EQ(*ParseQuantity("80C", Unit::kCelsius), 80);
  EXPECT_DOUBLE_EQ(*ParseQuantity("80°C", Unit::kCelsius), 80);
  EXPECT_DOUBLE_EQ(*ParseQuantity("0.5kW", Unit::kWatts), 500);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1.5GHz", Unit::kHertz), 1.5e9);
}

TEST(Quantity, UnitThatDoesNotFitTheFieldIsAnErrorListingTheValidOnes) {
  Result<double> v = ParseQuantity("80W", Unit::kCelsius);
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message().find("C or °C"), std::string::npos) << v.error().message();
  EXPECT_FALSE(ParseQuantity("3GiB", Unit::kCount));
  EXPECT_FALSE(ParseQuantity("abc", Unit::kCount));
}

TEST(Quantity, SizesTakeTheUnitsOfEveryOtherSizeParser) {
  // core/unit_names.h: the CLI's --memory-limit and a scenario's sizes read the same names.
  EXPECT_DOUBLE_EQ(*ParseQuantity("2G", Unit::kBytes), 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*ParseQuantity("3kB", Unit::kBytes), 3000);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1TiB/s", Unit::kBytesPerSecond), 1099511627776.0);
  Result<double> v = ParseQuantity("8GiBs", Unit::kBytes);
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message().find("unit 'GiBs' does not fit here: use B, KiB, MiB, GiB, TiB"),
            std::string::npos)
      << v.error().message();
}

TEST(FormatValue, WritesValuesInTheFieldsUnit) {
  EXPECT_EQ(FormatValue(0.931, Unit::kRatio), "93.1%");
  EXPECT_EQ(FormatValue(8.0 * 1024 * 1024 * 1024, Unit::kBytes), "8.00 GiB");
  EXPECT_EQ(FormatValue(85, Unit::kCelsius), "85°C");
  EXPECT_EQ(FormatValue(3, Unit::kCount), "3");
}

}  // namespace
}  // namespace gpuwatch::rules
