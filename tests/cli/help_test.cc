// Help, examples, completion and the man page, all read off the one command
// tree (cli/cli_app.h): every command and option appears in each, every
// example parses with the real parser.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "cli/cli_app.h"
#include "cli/completion.h"
#include "cli/help_examples.h"
#include "cli/help_format.h"
#include "cli/help_option.h"
#include "cli/help_values.h"
#include "cli/manpage.h"
#include "cli_util.h"

namespace gpuwatch::cli {
namespace {

namespace fs = std::filesystem;
using testing::Gpuwatch;

// Every command's name, "" for gpuwatch itself.
std::vector<std::string> CommandNames(const CLI::App& root) {
  std::vector<std::string> names = {""};
  for (const CLI::App* c : Commands(root)) names.push_back(c->get_name());
  return names;
}

const CLI::App& CommandOf(const CLI::App& root, const std::string& name) {
  return name.empty() ? root : *root.get_subcommand(name);
}

// Every named option of every command (the main app's included), with the
// command it belongs to.
std::vector<std::pair<std::string, const CLI::Option*>> EveryOption(const CLI::App& root) {
  std::vector<std::pair<std::string, const CLI::Option*>> out;
  for (const std::string& name : CommandNames(root)) {
    for (const CLI::Option* o : NamedOptions(CommandOf(root, name))) out.emplace_back(name, o);
  }
  return out;
}

std::vector<std::string> Spellings(const CLI::Option& o) {
  std::vector<std::string> out;
  for (const std::string& s : o.get_snames()) out.push_back("-" + s);
  for (const std::string& l : o.get_lnames()) out.push_back("--" + l);
  return out;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Help, CommandHelpListsTheGlobalOptions) {
  const auto r = Gpuwatch("watch --help");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::size_t globals = r.out.find("Global options:");
  ASSERT_NE(globals, std::string::npos) << r.out;
  for (const char* o :
       {"--demo", "--scenario", "--host-proc", "--replay", "--replay-speed", "--color"}) {
    EXPECT_GT(r.out.find(o, globals), globals) << o << " not under Global options:\n" << r.out;
  }
  EXPECT_LT(r.out.find("--interval"), globals) << "the command's own options come first";
}

TEST(Help, ShowsDefaultsButNoEmptyOnes) {
  const auto r = Gpuwatch("watch --help");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(-i,--interval TEXT +Time between .*\[default: 1s\])")))
      << r.out;
  EXPECT_TRUE(Has(r.out, "--color auto|always|never")) << r.out;
  EXPECT_TRUE(Has(r.out, "[default: auto]")) << r.out;
  auto cli = BuildCli();
  for (const auto& [command, option] : EveryOption(cli->app)) {
    const std::string d = DefaultOf(*option);
    EXPECT_NE(d, "[]") << command << " " << option->get_name();
    EXPECT_NE(d, "false") << command << " " << option->get_name() << ": a flag has no default";
    const std::string help = CommandOf(cli->app, command).help();
    EXPECT_FALSE(Has(help, "[default: ]")) << command;
    EXPECT_FALSE(Has(help, "[default: []]")) << command;
    EXPECT_FALSE(Has(help, "[VALUE]")) << command << ": a flag shown as taking a value";
  }
}

TEST(Help, EveryCommandShowsItsExamples) {
  auto cli = BuildCli();
  for (const std::string& name : CommandNames(cli->app)) {
    const std::vector<Example> examples = ExamplesOf(name);
    EXPECT_FALSE(examples.empty()) << "no examples for `" << name << "`";
    if (name != "version" && name != "man") {
      EXPECT_GE(examples.size(), 2u) << name;
    }
    EXPECT_LE(examples.size(), 4u) << name;
    const std::string help = CommandOf(cli->app, name).help();
    for (const Example& e : examples) {
      EXPECT_TRUE(Has(help, std::string(e.line))) << name << " help lacks " << e.line;
    }
  }
  const auto r = Gpuwatch("select --help");
  EXPECT_TRUE(Has(r.out, "Examples:\n  gpuwatch select -n 2 --min-free 20GiB\n")) << r.out;
}

TEST(Help, ExamplesNameOnlyRealCommands) {
  auto cli = BuildCli();
  const std::vector<std::string> names = CommandNames(cli->app);
  for (const Example& e : Examples()) {
    EXPECT_NE(std::find(names.begin(), names.end(), e.command), names.end()) << e.line;
  }
}

// Runs each example through the real parser (no command runs), in a
// directory holding the files it names, so options that check their file
// exists see one.
TEST(Help, EveryExampleParses) {
  const fs::path dir = fs::temp_directory_path() / ("gw-help-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  const std::regex file_name(R"([\w-]+\.(jsonl|db|yaml|csv|html|py|sh))");
  for (const Example& e : Examples()) {
    const std::vector<std::string> args = ExampleArguments(e.line);
    for (const std::string& a : args) {
      if (std::regex_match(a, file_name)) std::ofstream(dir / a) << "\n";
    }
    auto cli = BuildCli();
    EXPECT_EQ(ParseCli(*cli, args), -1) << e.line;
    if (e.command.empty()) {
      EXPECT_TRUE(cli->app.get_subcommands().empty()) << e.line;
    } else {
      EXPECT_TRUE(cli->app.got_subcommand(std::string(e.command))) << e.line;
    }
  }
  fs::current_path(before);
  fs::remove_all(dir);
}

TEST(Help, ABadExampleFailsToParse) {
  auto cli = BuildCli();
  EXPECT_EQ(ParseCli(*cli, ExampleArguments("gpuwatch watch --intervall 1s")), kExitUsage);
  auto other = BuildCli();
  EXPECT_EQ(ParseCli(*other, ExampleArguments("gpuwatch top --color sometimes")), kExitUsage);
}

TEST(Help, ExampleArgumentsStopAtARedirection) {
  EXPECT_EQ(ExampleArguments("gpuwatch completion bash > /etc/x"),
            (std::vector<std::string>{"completion", "bash"}));
  EXPECT_EQ(ExampleArguments("gpuwatch man | man -l -"), (std::vector<std::string>{"man"}));
}

TEST(ValueHints, AHintForAMissingOptionIsAnError) {
  CLI::App app;
  std::string format;
  app.add_subcommand("query", "")->add_option("--format", format);
  app.add_subcommand("watch", "no options");
  const Status st = ApplyValueHints(app);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Has(st.message(), "`watch` has no option --csv")) << st.message();
  EXPECT_TRUE(Has(st.message(), "`watch` has no option --jsonl")) << "every missing one";
  CLI::App empty;
  EXPECT_TRUE(ApplyValueHints(empty).message().starts_with("value hints: no command query; "));
}

TEST(ValueHints, EveryHintNamesARealOption) {
  auto cli = BuildCli();
  EXPECT_TRUE(cli->help_hints.ok()) << cli->help_hints.message();
}

TEST(ValueHints, TurnIntoFilesAndChoices) {
  auto cli = BuildCli();
  const CLI::App& app = cli->app;
  EXPECT_EQ(ValueOf(*app.get_subcommand("watch")->get_option("--csv")).kind,
            OptionValue::Kind::kFile);
  EXPECT_EQ(ValueOf(*app.get_option("--host-proc")).kind, OptionValue::Kind::kDirectory);
  const OptionValue format = ValueOf(*app.get_subcommand("query")->get_option("--format"));
  EXPECT_EQ(format.choices, (std::vector<std::string>{"csv", "csv,noheader", "csv,nounits",
                                                      "csv,noheader,nounits"}));
  EXPECT_EQ(ValueOf(*app.get_option("--color")).choices,
            (std::vector<std::string>{"auto", "always", "never"}));
  EXPECT_EQ(ValueOf(*app.get_option("--demo")).kind, OptionValue::Kind::kNone);
  // A hint does not check: the command says what is wrong itself.
  auto other = BuildCli();
  EXPECT_EQ(ParseCli(*other, {"top", "--theme", "purple"}), -1);
}

TEST(Completion, EveryScriptHasEveryCommandAndOption) {
  auto cli = BuildCli();
  const CLI::App& root = cli->app;
  const std::string bash = BashCompletion(root);
  const std::string zsh = ZshCompletion(root);
  const std::string fish = FishCompletion(root);
  for (const CLI::App* c : Commands(root)) {
    const std::string name = c->get_name();
    EXPECT_TRUE(Has(bash, "    " + name + ") words='")) << name;
    EXPECT_TRUE(Has(zsh, "    '" + name + ":")) << name;
    EXPECT_TRUE(Has(fish, "-a " + name + " -d")) << name;
  }
  for (const auto& [command, option] : EveryOption(root)) {
    for (const std::string& s : Spellings(*option)) {
      // In the words offered after the command (or gpuwatch itself).
      const std::string arm =
          command.empty() ? "      \"\") words='" : "    " + command + ") words='";
      const std::size_t at = bash.find(arm);
      ASSERT_NE(at, std::string::npos) << command;
      std::string words = bash.substr(at, bash.find('\n', at) - at);
      std::replace(words.begin(), words.end(), '\'', ' ');
      EXPECT_TRUE(Has(words + " ", " " + s + " ")) << command << " " << s;
      EXPECT_TRUE(Has(zsh, "'" + s + "[") || Has(zsh, s + "=[") || Has(zsh, s + "+[") ||
                  Has(zsh, "*" + s) || Has(zsh, ")" + s))
          << command << " " << s;
      const std::string fish_name =
          s.starts_with("--") ? " -l " + s.substr(2) : " -s " + s.substr(1);
      EXPECT_TRUE(Has(fish, fish_name)) << command << " " << s;
    }
  }
}

TEST(Completion, UnknownShellIsAnError) {
  auto cli = BuildCli();
  const auto script = CompletionScript(cli->app, "tcsh");
  ASSERT_FALSE(script);
  EXPECT_TRUE(Has(script.error().message(), "\"tcsh\"")) << script.error().message();
  const auto r = Gpuwatch("completion tcsh");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(Has(r.err, "tcsh")) << r.err;
}

TEST(ManPage, HasEverySectionCommandAndOption) {
  auto cli = BuildCli();
  const CLI::App& root = cli->app;
  const std::string page = ManPage(root, "1.2.3");
  EXPECT_TRUE(page.starts_with(".\\\" gpuwatch(1)")) << page.substr(0, 80);
  EXPECT_TRUE(Has(page, ".TH GPUWATCH 1 \"\" \"gpuwatch 1.2.3\""));
  for (const char* section : {".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n", ".SH COMMANDS\n",
                              ".SH OPTIONS\n", ".SH EXAMPLES\n", ".SH ENVIRONMENT\n", ".SH FILES\n",
                              ".SH \"EXIT STATUS\"\n", ".SH \"SEE ALSO\"\n"}) {
    EXPECT_TRUE(Has(page, section)) << section;
  }
  for (const CLI::App* c : Commands(root)) {
    EXPECT_TRUE(Has(page, ".SS \"gpuwatch " + c->get_name() + "\"\n")) << c->get_name();
  }
  for (const auto& [command, option] : EveryOption(root)) {
    for (const std::string& s : Spellings(*option)) {
      std::string roff;
      for (char ch : s) roff += ch == '-' ? std::string("\\-") : std::string(1, ch);
      EXPECT_TRUE(Has(page, "\\fB" + roff + "\\fR")) << command << " " << s;
    }
  }
  EXPECT_TRUE(Has(page, "Default: \\fB1s\\fR.")) << "watch --interval's default";
  EXPECT_TRUE(Has(page, "\\fBNO_COLOR\\fR"));
  EXPECT_TRUE(Has(page, "\\fBnvidia-smi\\fR(1)"));
  for (const Example& e : Examples()) {
    EXPECT_TRUE(Has(page, std::string(e.what))) << e.line;
  }
}

TEST(ManPage, EscapesRoff) {
  EXPECT_EQ(RoffEscape("a\\b"), "a\\eb");
  EXPECT_EQ(RoffEscape(".x\n'y"), "\\&.x\n\\&'y");
}

}  // namespace
}  // namespace gpuwatch::cli
