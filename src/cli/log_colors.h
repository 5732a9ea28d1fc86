// Colour for the log lines `watch` and `run` write on a terminal (--color,
// NO_COLOR; cli/context.h's UseColor decides): an event by what it says (bold
// red critical, yellow warning, green when trouble ends), an alert line of the
// rules' `log` action by its ALERT / RESOLVED word and severity, a lost or
// stale GPU's sample line red. Without colour every line stays as it is.
#pragma once

#include <string>
#include <string_view>

#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::cli {

class LogColors {
 public:
  explicit LogColors(bool enabled) : enabled_(enabled) {}
  std::string Event(const gpuwatch::Event& event, std::string line) const;
  std::string Sample(const DeviceSample& device, std::string line) const;
  // A line of the rules' `log` action ("[12:00:00] ALERT critical ...") or
  // a warning: coloured by its first word after the time.
  std::string Logged(std::string_view line) const;

 private:
  std::string Paint(std::string_view style, std::string line) const;
  bool enabled_;
};

}  // namespace gpuwatch::cli
