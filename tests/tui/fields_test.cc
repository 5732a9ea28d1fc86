// What `top` asks of the driver: only the fields it draws (DrawnFields) and
// those its analyses judge (the pipeline's, tests/engine/pipeline_fields_test).
// Every screen drawn from snapshots read with only the drawn fields must be
// the one drawn from snapshots with every field: a field the view draws but
// DrawnFields leaves out shows as a difference here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tui/keys.h"
#include "tui/view.h"
#include "tui_test_model.h"

namespace gpuwatch::tui {
namespace {

// Where two canvases first differ, as the two lines there.
std::string FirstDifference(const Canvas& all, const Canvas& drawn) {
  for (int y = 0; y < all.height(); ++y) {
    for (int x = 0; x < all.width(); ++x) {
      if (!(all.At(x, y) == drawn.At(x, y))) {
        return "row " + std::to_string(y) + " column " + std::to_string(x) +
               "\n every field: " + all.Line(y) + "\n drawn fields: " + drawn.Line(y);
      }
    }
  }
  return "";
}

TEST(TopFields, TheDemoReadWithTheDrawnFieldsLacksTheOthers) {
  const FieldMask drawn = DrawnFields();
  // Not every field: the test below would compare a read with itself.
  for (FieldId id : {FieldId::kFanSpeedRatio, FieldId::kEnergyJoules, FieldId::kPowerDrawPeakWatts,
                     FieldId::kSerial, FieldId::kEccErrorsCorrectedAggregate}) {
    EXPECT_FALSE(Has(drawn, id)) << Info(id).key;
  }
  const TopModel all = DemoModel();
  const TopModel only = DemoModel(drawn);
  // GPU 6, an L40S, has a fan: read with every field, not with the drawn ones.
  const DeviceSample& full = all.hosts[0].state.snapshot->devices.at(6);
  const DeviceSample& narrow = only.hosts[0].state.snapshot->devices.at(6);
  EXPECT_TRUE(full.fields[FieldId::kFanSpeedRatio].ok());
  EXPECT_FALSE(narrow.fields[FieldId::kFanSpeedRatio].ok());
  EXPECT_TRUE(narrow.fields[FieldId::kMemoryUsedBytes].ok());
}

TEST(TopFields, EveryScreenIsTheSameDrawnFromTheDrawnFieldsAsFromEveryField) {
  const TopModel all = DemoModel();
  const TopModel only = DemoModel(DrawnFields());
  int screens = 0;
  auto same = [&](ViewState st, int w, int h, const std::string& what) {
    ViewState copy = st;
    const Drawn a = Draw(all, st, w, h);
    const Drawn b = Draw(only, copy, w, h);
    ++screens;
    EXPECT_TRUE(a.canvas == b.canvas)
        << what << " at " << w << "x" << h << ": " << FirstDifference(a.canvas, b.canvas);
    return a.layout;
  };
  for (auto [w, h] : {std::pair{120, 40}, std::pair{80, 24}, std::pair{200, 60}}) {
    for (bool tree : {false, true}) {
      ViewState st;
      st.tree = tree;
      const Layout layout = same(st, w, h, tree ? "the tree" : "the main screen");
      // Each process's own view.
      for (const ProcessRow& row : layout.rows) {
        ViewState open = st;
        open.selected = row.key;
        HandleKey(kKeyEnter, open, all, layout, {});
        ASSERT_EQ(open.screen, Screen::kProcess);
        same(open, w, h, "the view of pid " + std::to_string(row.key.pid));
      }
    }
  }
  // Three sizes, two layouts, and each process of the demo at least once.
  EXPECT_GT(screens, 6 + 2 * 8);
}

}  // namespace
}  // namespace gpuwatch::tui
