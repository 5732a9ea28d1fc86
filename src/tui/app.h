// The loop of `top`: keys and mouse in, the view drawn whenever the model,
// the keys or the terminal's size changed (never otherwise), signals sent,
// replay moved.
#pragma once

#include <filesystem>
#include <functional>

#include "tui/feed.h"
#include "tui/view_state.h"

namespace gpuwatch::tui {

struct AppOptions {
  Theme theme = Theme::kDark;
  bool readonly = false;
  bool ascii = false;  // ASCII glyphs even in a UTF-8 locale
  bool mouse = true;
  std::filesystem::path proc_dir = "/proc";
};

// Runs until q (returns 0) or `stop` says so (returns its value); an error
// when the terminal cannot be used.
Result<int> RunTop(Feed& feed, const AppOptions& options, const std::function<int()>& stop);

}  // namespace gpuwatch::tui
