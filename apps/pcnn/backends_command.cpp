// pcnn backends: what is compiled in, whether each one can run here (and on what), its traits.
#include <cstdio>

#include "apps/pcnn/commands.hpp"
#include "backends/registry.hpp"
#include "core/check.hpp"

namespace pcnn::cli {

Command add_backends_command(CLI::App& app) {
  auto* sub = app.add_subcommand("backends", "List the backends compiled in and usable here");
  auto threads = std::make_shared<int>(0);
  sub->add_option("--threads", *threads, "CPU threads for the CPU backends (0 = all)");
  return {sub, [threads] {
            std::printf("%-8s %-7s %-58s %s\n", "backend", "usable", "what it is",
                        "runs on (or why not)");
            for (const auto& e : compiled_backends()) {
              BackendOptions opts;
              opts.threads = *threads;
              std::string where, usable = "yes";
              try {
                where = e.create(opts)->device_name();
              } catch (const Unavailable& u) {
                usable = "no";
                where = u.what();
              }
              std::printf("%-8s %-7s %-58s %s\n", e.name.c_str(), usable.c_str(),
                          e.summary.c_str(), where.c_str());
              std::printf("%-16s %s\n", "", describe_traits(e).c_str());
            }
            for (const auto& e : known_backends())
              if (!e.create)
                std::printf("not compiled in: %s (%s)\n", e.name.c_str(), e.not_built_why.c_str());
            return 0;
          }};
}

}  // namespace pcnn::cli
