#include "cli/top_cli.h"

#include <algorithm>
#include <variant>

#include "analysis/rules/rule_parser.h"
#include "cli/commands.h"

namespace gpuwatch::cli {
namespace {

// Whether the rule file at `path` posts a webhook. A file that does not
// parse needs gpuwatch-full too: it says what is wrong, as for any command.
bool RulesNeedHttp(const std::string& path) {
  rules::ParseOptions options;
  options.allow_commands = true;  // refused or not, gpuwatch-full decides
  auto set = rules::LoadRuleFile(path, options);
  if (!set) return true;
  return std::any_of(set->rules.begin(), set->rules.end(), [](const rules::Rule& rule) {
    return std::any_of(rule.actions.begin(), rule.actions.end(), [](const rules::Action& a) {
      return std::holds_alternative<rules::WebhookAction>(a);
    });
  });
}

// Whether a parsed `top` needs what only gpuwatch-full holds (top_cli.h).
bool TopNeedsFull(const CLI::App& top, const CommonArgs& common) {
  if (top.count("--remote") > 0 || top.count("--prometheus") > 0) return true;
  if (!common.replay.empty()) return true;
  const std::string rules = top.get_option("--rules")->as<std::string>();
  return !rules.empty() && RulesNeedHttp(rules);
}

}  // namespace

std::unique_ptr<Cli> BuildTopCli() {
  return BuildCliWith([](CLI::App& app, const CommonArgs& common) -> std::vector<Runner> {
    return {AddTopCommand(app, common, nullptr)};
  });
}

FrontDecision ParseTopOnly(Cli& cli, const std::vector<std::string>& argv) {
  using Action = FrontDecision::Action;
  constexpr int kDelegate = -2;
  const int code = ParseCliWith(cli, argv, [](const CLI::ParseError*, const std::string&) {
    return kDelegate;  // help, the version, a mistake: gpuwatch-full says it
  });
  if (code != -1) return {Action::kDelegate, 0};
  const CLI::App* top = cli.app.get_subcommand("top");
  if (!top->parsed() || TopNeedsFull(*top, cli.common)) return {Action::kDelegate, 0};
  return {Action::kRun, 0};
}

}  // namespace gpuwatch::cli
