// Child processes through popen: the arguments are single-quoted for the shell, stdout is the
// child's JSON report (it prints nothing else with --json-only), stderr goes straight through.
#include "bench/child.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench/report.hpp"
#include "core/check.hpp"

namespace pcnn::bench {

namespace {
template <typename T>
std::string join(const std::vector<T>& v) {
  std::string s;
  for (const T& x : v) {
    if (!s.empty()) s += ",";
    if constexpr (std::is_same_v<T, std::string>) s += x;
    else s += std::to_string(x);
  }
  return s;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace

std::vector<std::string> child_arguments(const BenchOptions& o, const std::string& backend,
                                         int threads) {
  char budget[32];
  std::snprintf(budget, sizeof budget, "%g", o.policy.budget_s);
  std::vector<std::string> a = {"bench",
                                "--models", join(o.models),
                                "--batch-sizes", join(o.batches),
                                "--backends", backend,
                                "--threads", std::to_string(threads),
                                "--repeat", std::to_string(o.policy.repeat),
                                "--warmup", std::to_string(o.policy.warmup),
                                "--budget", budget,
                                "--per-layer", o.per_layer,
                                "--images", std::to_string(o.synthetic_images),
                                "--seed", std::to_string(o.seed),
                                "--optimizer", o.optimizer,
                                "--precision", o.precision,
                                "--json-only"};
  if (!o.data_dir.empty()) a.insert(a.end(), {"--data", o.data_dir});
  if (!o.data_format.empty()) a.insert(a.end(), {"--data-format", o.data_format});
  return a;
}

BenchReport run_child(const std::string& exe, const std::vector<std::string>& args) {
  std::string cmd = shell_quote(exe);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  std::fflush(nullptr);  // the child shares stderr: keep the lines in order
  FILE* pipe = popen(cmd.c_str(), "r");
  PCNN_CHECK(pipe, "cannot start the child process '" << cmd << "'");
  std::string out;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = pclose(pipe);
  PCNN_CHECK(status == 0, "child bench failed (status " << status << "): " << cmd);
  try {
    return report_from_json(nlohmann::json::parse(out));
  } catch (const nlohmann::json::exception& e) {
    throw Error("child bench printed no valid JSON (" + std::string(e.what()) + "): " + cmd);
  }
}

}  // namespace pcnn::bench
