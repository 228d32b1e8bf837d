// CLI11 raises the parse errors; this file only rewords the ones whose text does not name the
// word at fault plainly ("1 required INT missing", "Could not convert: --epochs = x").
#include "apps/pcnn/usage_errors.hpp"

#include "apps/pcnn/suggest.hpp"

namespace pcnn::cli {

namespace {
bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// "--epochs: 1 required INT missing" -> "--epochs needs a value (INT)".
std::string reword_mismatch(const std::string& what) {
  const std::string required = " required ";
  const size_t colon = what.find(": ");
  const size_t missing = what.rfind(" missing");
  const size_t type_at = what.find(required) + required.size();  // wraps below size() if absent
  if (colon == std::string::npos || missing == std::string::npos || type_at < required.size())
    return what;
  return what.substr(0, colon) + " needs a value (" + what.substr(type_at, missing - type_at) + ")";
}

// "Could not convert: --epochs = x" -> "--epochs takes INT, got 'x'".
std::string reword_conversion(const CLI::App& command, const std::string& what) {
  const std::string head = "Could not convert: ";
  const size_t eq = what.find(" = ");
  if (!starts_with(what, head) || eq == std::string::npos) return what;
  const std::string name = what.substr(head.size(), eq - head.size());
  const CLI::Option* opt = command.get_option_no_throw(name);
  const std::string type = opt ? opt->get_type_name() : "another value";
  const std::string value = what.substr(eq + 3);
  if (starts_with(value, "--"))  // "--lr --epochs 3": the next option was taken for the value
    return name + " needs a value (" + type + ") before " + value;
  return name + " takes " + type + ", got '" + value + "'";
}
}  // namespace

const CLI::App& command_in_use(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->parsed()) return command_in_use(*sub);
  return app;
}

std::string command_path(const CLI::App& command) {
  const CLI::App* parent = command.get_parent();
  return parent ? command_path(*parent) + " " + command.get_name() : command.get_name();
}

std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : command.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

namespace {
// Why one command's leftover word is not known, with the closest known word.
std::string unknown_word(const CLI::App& app, const CLI::App& command, const std::string& word) {
  if (!starts_with(word, "-")) {
    if (&command == &app)
      return "unknown command '" + word + "'" + did_you_mean(word, subcommand_names(app));
    return "unexpected argument '" + word + "' (" + command.get_name() + " takes options only)";
  }
  const std::string guess = did_you_mean(word, option_names(command));
  if (!guess.empty() || &command != &app) return "unknown option '" + word + "'" + guess;
  for (const CLI::App* sub : app.get_subcommands({}))  // "pcnn --epochs 3 train"
    if (sub->get_option_no_throw(word))
      return "unknown option '" + word + "' (it is an option of 'pcnn " + sub->get_name() +
             "': put it after the command)";
  return "unknown option '" + word + "'";
}
}  // namespace

void reject_extras(const CLI::App& app) {
  // From the program down to the command in use: the first level with words left over.
  for (const CLI::App* command = &app; command;) {
    const std::vector<std::string> extras = command->remaining();
    if (!extras.empty()) {
      // The first word that looks like an option is the likeliest culprit: in "--epoch 1" the
      // 1 is only left over because --epoch was not known.
      std::string word = extras.front();
      for (const std::string& e : extras)
        if (starts_with(e, "-")) {
          word = e.substr(0, e.find('='));
          break;
        }
      throw CLI::ExtrasError(unknown_word(app, *command, word), CLI::ExitCodes::ExtrasError);
    }
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : command->get_subcommands({}))
      if (sub->parsed()) next = sub;
    command = next;
  }
}

std::string usage_error_line(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App& command = command_in_use(app);
  std::string what = e.what();
  if (e.get_name() == "ArgumentMismatch") what = reword_mismatch(what);
  if (e.get_name() == "ConversionError") what = reword_conversion(command, what);
  const std::string path = command_path(command);
  return path + ": error: " + what + "; see '" + path + " --help'";
}

}  // namespace pcnn::cli
