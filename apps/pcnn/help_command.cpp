// pcnn help [COMMAND]: the same text as pcnn --help or pcnn COMMAND --help.
#include <cstdio>

#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/suggest.hpp"
#include "apps/pcnn/usage_errors.hpp"

namespace pcnn::cli {

Command add_help_command(CLI::App& app) {
  auto topic = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("help", "Show the options of pcnn or of one command");
  CLI::Option* topic_option = sub->add_option("command", *topic, "the command to explain");
  // CLI11 would read "train" in "pcnn help train" as the train command, unless a required
  // positional is still unfilled: required, then, exactly when a word follows.
  sub->preparse_callback([topic_option](size_t words_left) { topic_option->required(words_left > 0); });
  return {sub, [&app, topic] {
            // app.help() would show the help of the command running now: this one.
            const auto format = [](const CLI::App& a, const std::string& prefix) {
              return a.get_formatter()->make_help(&a, prefix, CLI::AppFormatMode::Normal);
            };
            if (topic->empty()) {
              std::printf("%s", format(app, app.get_name()).c_str());
              return kExitSuccess;
            }
            for (const CLI::App* c : app.get_subcommands({}))
              if (c->get_name() == *topic) {
                std::printf("%s", format(*c, command_path(*c)).c_str());
                return kExitSuccess;
              }
            throw CLI::ValidationError("unknown command '" + *topic + "'" +
                                       did_you_mean(*topic, subcommand_names(app)));
          }};
}

}  // namespace pcnn::cli
