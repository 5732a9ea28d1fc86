#include "cli/help_option.h"

#include <algorithm>

#include "core/ascii.h"

namespace gpuwatch::cli {
namespace {

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool Contains(std::string_view text, std::string_view word) {
  return AsciiLower(text).find(word) != std::string::npos;
}

}  // namespace

OptionValue ValueOf(const CLI::Option& option) {
  OptionValue value;
  value.repeatable = option.get_expected_max() >= CLI::detail::expected_max_vector_size ||
                     option.get_items_expected_max() > 1 ||
                     option.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
  if (option.get_expected_max() == 0) return value;  // a flag
  value.optional = option.get_expected_min() == 0;
  const std::vector<std::string> parts = Split(option.get_type_name(), ':');
  value.kind = OptionValue::Kind::kText;
  value.name = parts.empty() || parts.front().empty() ? "VALUE" : parts.front();
  for (const std::string& part : parts) {
    if (part == "FILE") {
      value.kind = OptionValue::Kind::kFile;
      value.name = "FILE";
    } else if (part == "DIR") {
      value.kind = OptionValue::Kind::kDirectory;
      value.name = "DIR";
    } else if (part.size() >= 2 && part.front() == '{' && part.back() == '}') {
      value.kind = OptionValue::Kind::kChoice;
      const std::string_view inside = std::string_view(part).substr(1, part.size() - 2);
      value.choices = Split(inside, inside.find('|') != std::string_view::npos ? '|' : ',');
    }
  }
  return value;
}

std::string DefaultOf(const CLI::Option& option) {
  if (ValueOf(option).kind == OptionValue::Kind::kNone) return "";
  const std::string text = option.get_default_str();
  if (text.empty() || text == "[]" || text == "{}" || text == "\"\"") return "";
  if (Contains(option.get_description(), "default")) return "";
  return text;
}

std::string NamesOf(const CLI::Option& option) {
  if (option.get_positional() && option.get_lnames().empty() && option.get_snames().empty()) {
    return option.get_name(true, false);
  }
  std::string names;
  for (const std::string& s : option.get_snames()) names += (names.empty() ? "-" : ", -") + s;
  for (const std::string& l : option.get_lnames()) names += (names.empty() ? "--" : ", --") + l;
  return names;
}

std::vector<const CLI::Option*> NamedOptions(const CLI::App& app, std::string_view group) {
  return app.get_options([group](const CLI::Option* o) {
    return o->nonpositional() && !o->get_group().empty() &&
           (group.empty() || o->get_group() == group);
  });
}

std::vector<const CLI::Option*> Positionals(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return o->get_positional(); });
}

std::vector<const CLI::Option*> GlobalOptions(const CLI::App& root) {
  return NamedOptions(root, kGlobalOptionsGroup);
}

std::vector<const CLI::App*> Commands(const CLI::App& root) {
  return root.get_subcommands(
      [](const CLI::App* sub) { return !sub->get_name().empty() && !sub->get_disabled(); });
}

}  // namespace gpuwatch::cli
