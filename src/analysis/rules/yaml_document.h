// A YAML file is one document: a second one (after a '---') would otherwise
// be dropped without a word (every rule after it, every option). Shared by
// the rule files and the daemon's --config and --web-config. Checked on the
// text: a '---' (or '...') at the start of a line always marks a document
// boundary in YAML, and yaml-cpp 0.7's LoadAll can loop without end on some
// malformed inputs (found by rules_fuzzer: memory grew past 2 GB).
#pragma once

#include <string_view>

#include "gpuwatch/status.h"

namespace gpuwatch::rules {

// Ok when `text` holds at most one document; else an error
// "SOURCE:LINE:1: a second YAML document ('---'): HINT" at the line where
// the second one starts.
Status CheckOneDocument(std::string_view text, std::string_view source, std::string_view hint);

}  // namespace gpuwatch::rules
