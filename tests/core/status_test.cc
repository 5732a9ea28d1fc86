#include "gpuwatch/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gpuwatch/reading.h"

namespace gpuwatch {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd");
  return x / 2;
}

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kOk);
}

TEST(Status, CarriesCodeAndMessage) {
  const Status s = Status::NotFound("no such GPU");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.message(), "no such GPU");
}

TEST(Status, WithContextPrefixesWhere) {
  const Status s = Status::InvalidArgument("unknown key").WithContext("a.yaml:3:5");
  EXPECT_EQ(s.message(), "a.yaml:3:5: unknown key");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Status::Ok().WithContext("x").ok());
}

TEST(Result, HoldsAValue) {
  auto r = Half(8);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 4);
  EXPECT_TRUE(r.status().ok());
}

TEST(Result, HoldsAnError) {
  auto r = Half(3);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "odd");
  EXPECT_EQ(r.value_or(-1), -1);
}

TEST(Result, MovesOutMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 7);
}

TEST(Reading, AbsentKeepsReasonAndDetail) {
  const Reading r = Reading::Absent(Missing::kNotSupported, "nvmlDeviceGetFanSpeed: Not Supported");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.missing(), Missing::kNotSupported);
  EXPECT_EQ(r.detail(), "nvmlDeviceGetFanSpeed: Not Supported");
  EXPECT_EQ(MissingName(r.missing()), "not_supported");
  EXPECT_EQ(r.number_or(-1), -1) << "absent is never a number, never 0";
}

TEST(Reading, NumberAndTextAreDistinct) {
  EXPECT_TRUE(Reading::Number(0).is_number());
  EXPECT_TRUE(Reading::Number(0).ok());
  EXPECT_TRUE(Reading::Text("H200").is_text());
  EXPECT_NE(Reading::Number(1), Reading::Number(2));
  EXPECT_EQ(Reading::Text("a"), Reading::Text("a"));
}

}  // namespace
}  // namespace gpuwatch
