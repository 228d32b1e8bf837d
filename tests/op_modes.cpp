// The op table's three modes over every usable backend in one process (ggml's test-backend-ops):
//   pcnn_tests --mode test   every case against serial        -> op x backend pass/fail table
//   pcnn_tests --mode grad   finite differences of grad cases -> op x backend pass/fail table
//   pcnn_tests --mode perf   median time of the perf cases    -> case x backend us, GFLOP/s, GB/s
// A mode of the test binary rather than a program of its own, like test-backend-ops: the binary
// already holds the table, the harness and the backend selection, and CI links one program fewer.
#include "tests/op_modes.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "bench/host_info.hpp"
#include "bench/timing.hpp"
#include "core/check.hpp"
#include "tests/op_table.hpp"

namespace pcnn::test {

namespace {

constexpr const char* kReference = "serial";

struct Options {
  std::string mode;
  std::vector<std::string> backends;  // empty: every compiled-in backend
  bool threaded = false;              // only the CPU backends that take a thread count
  std::string op, text;               // filters: op name and case name contain them
  bool all_cases = false;             // perf: every case, not only the perf ones
  bool verbose = false;
  int batch = 64;                     // the perf cases' batch
  int threads = 0;
  bench::RepeatPolicy policy{2, 10, 3, 1.0};
  std::string csv;
};

const char* kUsage =
    "usage: pcnn_tests --mode test|grad|perf [--backend A,B | --threaded] [--op NAME] [--case TEXT]\n"
    "                  [--all] [--batch N] [--repeat N] [--warmup N] [--budget S] [--threads N]\n"
    "                  [--csv FILE] [-v]\n"
    "  test: every case of the op table on each backend against serial\n"
    "  grad: finite differences of every case with a gradient check, on each backend\n"
    "  perf: median time per call of the perf cases (--all: every case), GFLOP/s and GB/s\n"
    "  --op NAME / --case TEXT keep the cases whose op name / case name contains the text\n"
    "  --threaded: the compiled-in CPU backends that take a thread count (with --threads N)\n";

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      PCNN_CHECK(i + 1 < argc, a << " needs a value\n" << kUsage);
      return argv[++i];
    };
    if (a == "--mode") o.mode = value();
    else if (a == "--backend") o.backends = split(value());
    else if (a == "--threaded") o.threaded = true;
    else if (a == "--op") o.op = value();
    else if (a == "--case") o.text = value();
    else if (a == "--all") o.all_cases = true;
    else if (a == "--batch") o.batch = std::stoi(value());
    else if (a == "--repeat") o.policy.repeat = o.policy.min_repeat = std::stoi(value());
    else if (a == "--warmup") o.policy.warmup = std::stoi(value());
    else if (a == "--budget") o.policy.budget_s = std::stod(value());
    else if (a == "--threads") o.threads = std::stoi(value());
    else if (a == "--csv") o.csv = value();
    else if (a == "-v") o.verbose = true;
    else throw Error("unknown option " + a + "\n" + kUsage);
  }
  PCNN_CHECK(o.mode == "test" || o.mode == "grad" || o.mode == "perf",
             "unknown mode '" << o.mode << "'\n" << kUsage);
  PCNN_CHECK(!o.threaded || o.backends.empty(), "--threaded picks the backends: drop --backend");
  return o;
}

struct Usable {
  std::string name;
  std::unique_ptr<Backend> be;
};

// The backends asked for (default: every compiled-in one), each created once; the ones that
// cannot run here are named with the reason and left out.
std::vector<Usable> usable_backends(const Options& o) {
  std::vector<std::string> names = o.backends;
  if (names.empty())
    for (const auto& e : compiled_backends())
      if (!o.threaded || (e.kind == BackendKind::Cpu && !e.sequential)) names.push_back(e.name);
  BackendOptions opts;
  opts.threads = o.threads;
  std::vector<Usable> out;
  for (const auto& name : names) {
    try {
      out.push_back({name, make_backend(name, opts)});
      std::printf("backend %-8s usable: %s\n", name.c_str(), out.back().be->device_name().c_str());
    } catch (const Unavailable& e) {
      std::printf("backend %-8s compiled in, not usable here: %s\n", name.c_str(), e.what());
    }
  }
  return out;
}

std::vector<OpCase> selected_cases(const Options& o) {
  std::vector<OpCase> out;
  for (OpCase& c : op_table(o.batch)) {
    if (!o.op.empty() && std::string(op_name(c.op)).find(o.op) == std::string::npos) continue;
    if (!o.text.empty() && c.name.find(o.text) == std::string::npos) continue;
    if (o.mode == "grad" && !c.grad) continue;
    if (o.mode == "perf" && !c.perf && !o.all_cases) continue;
    out.push_back(std::move(c));
  }
  return out;
}

size_t label_width(const std::vector<OpCase>& cases) {
  size_t w = 20;
  for (const auto& c : cases) w = std::max(w, c.label().size());
  return w;
}

// ---- test and grad: op x backend pass counts ---------------------------------------------------

struct Tally {
  int passed = 0, total = 0;
};

int check_mode(const Options& o, const std::vector<Usable>& bes, const std::vector<OpCase>& cases) {
  auto ref = make_backend(kReference);
  std::map<std::pair<int, std::string>, Tally> tally;  // (op, backend)
  int failures = 0, skipped = 0;
  for (const OpCase& c : cases) {
    const RunResult want = o.mode == "test" ? run_case(*ref, c) : RunResult{};
    for (const auto& u : bes) {
      Verdict v;
      try {
        v = o.mode == "test" ? compare_outputs(c, run_case(*u.be, c), want)
                             : check_gradient(*u.be, c);
      } catch (const std::exception& e) {
        v.ok = false;
        v.detail = std::string("threw: ") + e.what();
      }
      // Grad rows are the ops whose gradient was checked (the backward ops).
      const std::vector<Op> rows = o.mode == "test" ? std::vector<Op>{c.op} : c.grad->checks;
      for (Op op : rows) {
        Tally& t = tally[{int(op), u.name}];
        ++t.total;
        t.passed += v.ok;
      }
      skipped += v.skipped;
      if (!v.ok) {
        ++failures;
        std::printf("FAIL backend %s (%s), case %s:\n  %s\n", u.name.c_str(),
                    u.be->device_name().c_str(), c.label().c_str(), v.detail.c_str());
      } else if (o.verbose) {
        std::printf("ok   backend %s, case %s\n", u.name.c_str(), c.label().c_str());
      }
    }
  }
  std::printf("\n%-26s", o.mode == "test" ? "op (cases vs serial)" : "op (finite differences)");
  for (const auto& u : bes) std::printf(" %12s", u.name.c_str());
  std::printf("\n");
  for (int i = 0; i < kOpCount; ++i) {
    if (!tally.count({i, bes.front().name})) continue;
    std::printf("%-26s", op_name(Op(i)));
    for (const auto& u : bes) {
      const Tally& t = tally[{i, u.name}];
      char cell[32];
      std::snprintf(cell, sizeof cell, "%s %d/%d", t.passed == t.total ? "ok" : "FAIL", t.passed,
                    t.total);
      std::printf(" %12s", cell);
    }
    std::printf("\n");
  }
  std::printf("%d cases x %zu backends: %d failures", int(cases.size()), bes.size(), failures);
  if (o.mode == "grad") std::printf(", %d coordinates skipped on kinks", skipped);
  std::printf("\n");
  return failures ? 1 : 0;
}

// ---- perf: case x backend median time, GFLOP/s, GB/s -------------------------------------------

int perf_mode(const Options& o, const std::vector<Usable>& bes, const std::vector<OpCase>& cases) {
  std::FILE* csv = o.csv.empty() ? nullptr : std::fopen(o.csv.c_str(), "w");
  PCNN_CHECK(o.csv.empty() || csv, "cannot write " << o.csv);
  if (csv)
    std::fprintf(csv, "backend,device,op,case,median_us,q1_us,q3_us,samples,block,flops,bytes,"
                      "gflops,gbs\n");
  std::printf("host: %s, %d hardware threads; median of up to %d timed blocks after %d warm-up "
              "calls, synchronised\n",
              bench::host_cpu_model().c_str(), bench::host_cpu_threads(), o.policy.repeat,
              o.policy.warmup);
  const int w = int(label_width(cases));
  std::printf("\n%-*s", w, "");
  for (const auto& u : bes) std::printf(" | %-26s", u.name.c_str());
  std::printf("\n%-*s", w, "op case");
  for (size_t i = 0; i < bes.size(); ++i) std::printf(" | %10s %7s %7s", "us", "GFLOP/s", "GB/s");
  std::printf("\n");
  for (const OpCase& c : cases) {
    std::printf("%-*s", w, c.label().c_str());
    const std::vector<TensorSpec> specs = case_tensors(c);
    for (const auto& u : bes) {
      Backend& be = *u.be;
      try {
        DeviceTensors t(be, specs);
        const bench::Summary s =
            bench::time_blocks(be, [&] { c.launch(be, c.p, t); }, o.policy);
        const double us = s.median * 1e6;
        const double gflops = c.flops / s.median * 1e-9, gbs = c.bytes / s.median * 1e-9;
        std::printf(" | %10.1f %7.2f %7.2f", us, gflops, gbs);
        if (csv)
          std::fprintf(csv, "%s,\"%s\",%s,\"%s\",%.3f,%.3f,%.3f,%d,%d,%.0f,%.0f,%.4f,%.4f\n",
                       u.name.c_str(), be.device_name().c_str(), op_name(c.op), c.name.c_str(), us,
                       s.q1 * 1e6, s.q3 * 1e6, s.samples, s.block, c.flops, c.bytes, gflops, gbs);
      } catch (const std::exception& e) {
        std::printf(" | %-26s", "error");
        std::fprintf(stderr, "backend %s, case %s: %s\n", u.name.c_str(), c.label().c_str(),
                     e.what());
      }
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  if (csv) std::fclose(csv);
  return 0;
}

}  // namespace

bool wants_op_mode(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--mode") == 0) return true;
  return false;
}

int run_op_mode(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    const std::vector<Usable> bes = usable_backends(o);
    if (bes.empty()) {
      std::printf("SKIPPED: none of the backends asked for can run here\n");
      return 77;
    }
    const std::vector<OpCase> cases = selected_cases(o);
    PCNN_CHECK(!cases.empty(), "no case matches --op '" << o.op << "' --case '" << o.text << "'");
    std::printf("%s mode: %zu cases\n", o.mode.c_str(), cases.size());
    return o.mode == "perf" ? perf_mode(o, bes, cases) : check_mode(o, bes, cases);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pcnn_tests: %s\n", e.what());
    return 2;
  }
}

}  // namespace pcnn::test
