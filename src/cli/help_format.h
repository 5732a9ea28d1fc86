// `--help` of gpuwatch and of every command: each option with its default,
// the global options under every command, and the command's examples
// (help_examples.h) as the footer.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "gpuwatch/status.h"

namespace gpuwatch::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override;
  std::string make_option_opts(const CLI::Option* option) const override;
  std::string make_option_desc(const CLI::Option* option) const override;
  std::string make_footer(const CLI::App* app) const override;
};

// Sets the formatter on the finished tree and applies the value hints
// (help_values.h); returns what ApplyValueHints said.
[[nodiscard]] Status ConfigureHelp(CLI::App& root);

// The footer of `command`'s help ("" for gpuwatch itself): its examples.
std::string ExamplesFooter(std::string_view command);

}  // namespace gpuwatch::cli
