#include "cli/help_values.h"

#include <fmt/format.h>

namespace gpuwatch::cli {

std::vector<ValueHint> ValueHints() {
  return {
      {"query", "--format", "{csv|csv,noheader|csv,nounits|csv,noheader,nounits}"},
      {"watch", "--csv", "FILE"},
      {"watch", "--jsonl", "FILE"},
      {"watch", "--db", "FILE"},
      {"watch", "--rules", "FILE"},
      {"run", "--csv", "FILE"},
      {"run", "--jsonl", "FILE"},
      {"run", "--db", "FILE"},
      {"run", "--rules", "FILE"},
      {"run", "--json", "FILE"},
      {"run", "--report", "FILE"},
      {"run", "--order", "{load,memory,index,random}"},
      {"report", "source", "FILE"},
      {"report", "--output", "FILE"},
      {"serve", "--config", "FILE"},
      {"serve", "--web-config", "FILE"},
      {"serve", "--csv", "FILE"},
      {"serve", "--jsonl", "FILE"},
      {"serve", "--db", "FILE"},
      {"serve", "--rules", "FILE"},
      {"serve", "--socket", "FILE"},
      {"select", "--format", "{index,uuid,env}"},
      {"select", "--order", "{load,memory,index,random}"},
      {"top", "--theme", "{dark,light,mono}"},
      {"top", "--rules", "FILE"},
      {"top", "--remote-password-file", "FILE"},
      {"top", "--remote-ca", "FILE"},
  };
}

namespace {

// Advertises a value without checking it: the command checks it itself, with
// its own message.
CLI::Validator Hint(std::string_view value) {
  return CLI::Validator([](std::string&) { return std::string(); }, std::string(value));
}

}  // namespace

Status ApplyValueHints(CLI::App& root) {
  std::string missing;
  for (const ValueHint& hint : ValueHints()) {
    CLI::App* app = &root;
    if (!hint.command.empty()) {
      try {
        app = root.get_subcommand(std::string(hint.command));
      } catch (const CLI::OptionNotFound&) {
        missing += fmt::format("{}no command {}", missing.empty() ? "" : "; ", hint.command);
        continue;
      }
    }
    if (app->get_allow_extras()) continue;  // takes anything (serve in a build without it)
    CLI::Option* option = app->get_option_no_throw(std::string(hint.option));
    if (option == nullptr) {
      missing += fmt::format("{}`{}` has no option {}", missing.empty() ? "" : "; ", hint.command,
                             hint.option);
      continue;
    }
    if (hint.value.starts_with("{")) {
      option->check(Hint(hint.value));
    } else {
      option->type_name(std::string(hint.value));
    }
  }
  if (!missing.empty()) return Status::InvalidArgument("value hints: " + missing);
  return Status::Ok();
}

}  // namespace gpuwatch::cli
