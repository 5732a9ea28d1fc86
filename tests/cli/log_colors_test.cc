#include "cli/log_colors.h"

#include <gtest/gtest.h>

namespace gpuwatch::cli {
namespace {

Event Made(Event::Kind kind, Severity severity) {
  Event e;
  e.kind = kind;
  e.severity = severity;
  return e;
}

TEST(LogColors, EventsAreColouredByWhatTheySay) {
  const LogColors on(true);
  EXPECT_EQ(on.Event(Made(Event::Kind::kDiagnosis, Severity::kCritical), "x"),
            "\033[1;31mx\033[0m");
  EXPECT_EQ(on.Event(Made(Event::Kind::kDiagnosis, Severity::kWarning), "x"), "\033[33mx\033[0m");
  EXPECT_EQ(on.Event(Made(Event::Kind::kProcessStarted, Severity::kInfo), "x"), "x");
  // A leak or a forecast is never plain; the end of trouble is green.
  EXPECT_EQ(on.Event(Made(Event::Kind::kOomForecast, Severity::kInfo), "x"), "\033[33mx\033[0m");
  EXPECT_EQ(on.Event(Made(Event::Kind::kLeakCleared, Severity::kInfo), "x"), "\033[32mx\033[0m");
  EXPECT_EQ(on.Event(Made(Event::Kind::kDeviceLost, Severity::kInfo), "x"), "\033[1;31mx\033[0m");
}

TEST(LogColors, AlertLinesOfTheLogActionByTheirWord) {
  const LogColors on(true);
  EXPECT_EQ(on.Logged("[12:00:00] ALERT critical r: m"),
            "\033[1;31m[12:00:00] ALERT critical r: m\033[0m");
  EXPECT_EQ(on.Logged("[12:00:00] ALERT warning r: m"),
            "\033[33m[12:00:00] ALERT warning r: m\033[0m");
  EXPECT_EQ(on.Logged("[12:00:00] RESOLVED warning r: m"),
            "\033[32m[12:00:00] RESOLVED warning r: m\033[0m");
  EXPECT_EQ(on.Logged("action failed"), "action failed");
}

TEST(LogColors, ALostGpusSampleLineIsRedAndNothingIsColouredWhenOff) {
  DeviceSample lost;
  lost.health = DeviceHealth::kLost;
  DeviceSample fine;
  EXPECT_EQ(LogColors(true).Sample(lost, "x"), "\033[1;31mx\033[0m");
  EXPECT_EQ(LogColors(true).Sample(fine, "x"), "x");
  const LogColors off(false);
  EXPECT_EQ(off.Sample(lost, "x"), "x");
  EXPECT_EQ(off.Event(Made(Event::Kind::kDiagnosis, Severity::kCritical), "x"), "x");
  EXPECT_EQ(off.Logged("[12:00:00] ALERT critical r: m"), "[12:00:00] ALERT critical r: m");
}

}  // namespace
}  // namespace gpuwatch::cli
