// `gpuwatch man`: the gpuwatch(1) man page in roff (man(7) macros), derived
// from the CLI::App tree (help_option.h) and the examples table
// (help_examples.h): every command, every option with its default.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace gpuwatch::cli {

std::string ManPage(const CLI::App& root, std::string_view version);

// `text` safe in roff running text: backslashes, leading dots and quotes.
std::string RoffEscape(std::string_view text);

}  // namespace gpuwatch::cli
