// The examples of every command, in one table: the footer of each command's
// help, the EXAMPLES of the man page. help_test runs each through the real
// parser, so an example that stops parsing fails the build's tests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuwatch::cli {

struct Example {
  std::string_view command;  // the subcommand; "" for gpuwatch itself (status)
  std::string_view line;     // as typed: "gpuwatch watch -i 500ms"; no quotes
  std::string_view what;     // what it does, one line
};

const std::vector<Example>& Examples();
std::vector<Example> ExamplesOf(std::string_view command);

// The arguments of `line` as the shell would pass them: the words after
// "gpuwatch", up to a redirection or pipe (">", "|").
std::vector<std::string> ExampleArguments(std::string_view line);

}  // namespace gpuwatch::cli
