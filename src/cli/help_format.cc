#include "cli/help_format.h"

#include <fmt/format.h>

#include <sstream>

#include "cli/help_examples.h"
#include "cli/help_option.h"
#include "cli/help_values.h"

namespace gpuwatch::cli {
namespace {

// The subcommand name of `app` for the examples table: "" for the main app.
std::string_view CommandName(const CLI::App* app) {
  return app->get_parent() == nullptr ? std::string_view() : std::string_view(app->get_name());
}

const CLI::App* Root(const CLI::App* app) {
  while (app->get_parent() != nullptr) app = app->get_parent();
  return app;
}

}  // namespace

std::string HelpFormatter::make_help(const CLI::App* app, std::string name,
                                     CLI::AppFormatMode mode) const {
  if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
  std::ostringstream out;
  out << make_description(app) << make_usage(app, name) << make_positionals(app)
      << make_groups(app, mode);
  if (app->get_parent() != nullptr) {
    const std::vector<const CLI::Option*> globals = GlobalOptions(*Root(app));
    if (!globals.empty()) out << make_group(kGlobalOptionsGroup, false, globals);
  }
  out << make_subcommands(app, mode) << "\n" << make_footer(app);
  // CLI11 separates groups with two blank lines; one is enough.
  std::string text = out.str();
  for (std::size_t at; (at = text.find("\n\n\n")) != std::string::npos;) text.erase(at, 1);
  return text;
}

std::string HelpFormatter::make_option_opts(const CLI::Option* option) const {
  if (!option->get_option_text().empty()) return " " + option->get_option_text();
  const OptionValue value = ValueOf(*option);
  if (value.kind == OptionValue::Kind::kNone) return "";
  std::string text = " ";
  if (value.kind == OptionValue::Kind::kChoice) {
    std::string joined;
    for (const std::string& c : value.choices) joined += (joined.empty() ? "" : "|") + c;
    text += value.optional ? "[" + joined + "]" : joined;
  } else {
    text += value.optional ? "[" + value.name + "]" : value.name;
  }
  if (value.repeatable) text += " ...";
  if (option->get_required()) text += " REQUIRED";
  return text;
}

std::string HelpFormatter::make_option_desc(const CLI::Option* option) const {
  const std::string default_text = DefaultOf(*option);
  if (default_text.empty()) return option->get_description();
  return fmt::format("{} [default: {}]", option->get_description(), default_text);
}

std::string HelpFormatter::make_footer(const CLI::App* app) const {
  std::string footer = ExamplesFooter(CommandName(app));
  if (!app->get_footer().empty()) footer += app->get_footer() + "\n";
  return footer;
}

std::string ExamplesFooter(std::string_view command) {
  const std::vector<Example> examples = ExamplesOf(command);
  std::string out;
  if (!examples.empty()) {
    out += "Examples:\n";
    for (const Example& e : examples) out += fmt::format("  {}\n      {}\n", e.line, e.what);
  }
  if (command.empty()) {
    out += out.empty() ? "" : "\n";
    out +=
        "`gpuwatch COMMAND --help` for a command's options, `gpuwatch man` for the manual,\n"
        "`gpuwatch completion bash|zsh|fish` for shell completion (docs/cli.md).\n";
  }
  return out;
}

Status ConfigureHelp(CLI::App& root) {
  Status hints = ApplyValueHints(root);
  auto formatter = std::make_shared<HelpFormatter>();
  formatter->column_width(32);
  root.formatter(formatter);
  for (CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; })) {
    sub->formatter(formatter);
  }
  return hints;
}

}  // namespace gpuwatch::cli
