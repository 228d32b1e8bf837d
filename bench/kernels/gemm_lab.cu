// Kernel lab: GEMM (naive vs the shared-memory tile configs, scalar and vector) and the fused linear layer
// (bias + activation in the GEMM epilogue; activation derivative folded into the backward
// operand loads, dw|db and dx in one launch) against the unfused composition, on the op table's
// cases. Each variant is checked against the serial backend; times are per call inside a
// captured graph.
#include <string>

#include "backends/cuda/gemm.cuh"
#include "bench/kernels/lab.hpp"

using namespace pcnn;
using namespace pcnn::lab;

namespace {

const std::pair<const char*, cuda::GemmVariant> kVariants[] = {
    {"naive", cuda::GemmVariant::Naive},   {"tile16 (small)", cuda::GemmVariant::Small},
    {"tile16 k64 (small deep)", cuda::GemmVariant::SmallDeep},
    {"tile16 split-K", cuda::GemmVariant::SmallSplitK},
    {"tile32 (medium)", cuda::GemmVariant::Medium},
    {"tile32 split-K", cuda::GemmVariant::MediumSplitK}, {"tile64 (large)", cuda::GemmVariant::Large},
    {"vec64 split-K", cuda::GemmVariant::Vec64SplitK},
    {"vec32 split-K", cuda::GemmVariant::Vec32SplitK},
    {"auto", cuda::GemmVariant::Auto}};

// Every variant of one gemm case: checked against serial, then timed with beta = 0 so repeated
// calls do not grow C.
void gemm_case(CudaBackend& be, SerialBackend& ref, const OpCase& c) {
  auto& ctx = be.context();
  const test::GemmArgs& g = c.p.gemm;
  const int lda = g.trans_a ? g.M : g.K, ldb = g.trans_b ? g.K : g.N;
  const RunResult want = test::run_case(ref, c);
  DeviceTensors d(be, test::case_tensors(c));
  auto run = [&](cuda::GemmVariant v, float beta) {
    cuda::gemm(ctx, g.trans_a, g.trans_b, g.M, g.N, g.K, g.alpha, d.f("A"), lda, d.f("B"), ldb,
               beta, d.f("C"), g.N, v);
  };
  for (const auto& entry : kVariants) {
    const auto& vname = entry.first;
    const auto v = entry.second;
    if (v == cuda::GemmVariant::Naive && g.M * double(g.N) * g.K > 3e9) continue;
    d.reset();
    run(v, g.beta);
    const double err = check_outputs(c.name + " " + vname, c, d, want);
    const double us = time_graph_us(be, [&] { run(v, 0.f); });
    print_row(c.name, vname, us, c.flops, c.bytes, err);
  }
}

// The fused linear layer of one case (forward or backward): the unfused composition, then every
// tile configuration, each checked against serial; timed too if `timed`.
void linear_case(CudaBackend& be, SerialBackend& ref, const OpCase& c, bool timed) {
  auto& ctx = be.context();
  const auto& p = c.p;
  const bool fwd = c.op == Op::linear_forward;
  const RunResult want = test::run_case(ref, c);
  DeviceTensors d(be, test::case_tensors(c));
  auto launch = [&](cuda::GemmVariant v) {
    if (fwd)
      cuda::linear_forward(ctx, p.N, p.in, p.out, p.act, d.f("x"), d.f("w"), d.f("b"), d.f("y"), v);
    else
      cuda::linear_backward(ctx, p.N, p.in, p.out, p.act, d.f("x"), d.f("w"), d.f("y"), d.f("dy"),
                            p.want_dx ? d.f("dx") : nullptr, d.f("dw"),
                            p.with_bias ? d.f("db") : nullptr, v);
  };
  if (timed) print_header(c.label());
  if (timed) {
    const double us = time_graph_us(be, [&] {
      if (fwd)
        be.Backend::linear_forward(p.N, p.in, p.out, p.act, d.f("x"), d.f("w"), d.f("b"), d.f("y"));
      else
        be.Backend::linear_backward(p.N, p.in, p.out, p.act, d.f("x"), d.f("w"), d.f("y"),
                                    d.f("dy"), d.f("scratch"), p.want_dx ? d.f("dx") : nullptr,
                                    d.f("dw"), p.with_bias ? d.f("db") : nullptr);
    });
    print_row(c.name, "unfused (default)", us, c.flops, c.bytes,
              check_outputs(c.name + " unfused", c, d, want));
  }
  for (const auto& entry : kVariants) {
    const auto& vname = entry.first;
    const auto v = entry.second;
    if (v == cuda::GemmVariant::Naive) continue;
    d.reset();
    if (!timed) {
      launch(v);
      check_outputs(c.label() + " " + vname, c, d, want);
      continue;
    }
    const double us = time_graph_us(be, [&] { launch(v); });
    print_row(c.name, vname, us, c.flops, c.bytes, check_outputs(c.name + " " + vname, c, d, want));
  }
}

// The same on 16-bit activations (the op table's bf16 and fp16 linear cases): every FMA tile,
// the tensor-core tiles and Auto, each checked against serial at the case's 16-bit tolerance.
void linear16_case(CudaBackend& be, SerialBackend& ref, const OpCase& c, bool timed) {
  auto& ctx = be.context();
  const auto& p = c.p;
  const RunResult want = test::run_case(ref, c);
  DeviceTensors d(be, test::case_tensors(c));
  auto launch = [&](cuda::GemmVariant v) {
    if (c.op == Op::linear_forward_16)
      cuda::linear_forward_16(ctx, p.precision, p.N, p.in, p.out, p.act, d.u16("x"), d.f("w"),
                              d.f("b"), d.u16("y"), v);
    else
      cuda::linear_backward_16(ctx, p.precision, p.N, p.in, p.out, p.act, d.u16("x"), d.f("w"),
                               d.u16("y"), d.u16("dy"), p.want_dx ? d.u16("dx") : nullptr,
                               d.f("dw"), p.with_bias ? d.f("db") : nullptr, v);
  };
  if (timed) print_header(c.label());
  std::vector<std::pair<std::string, cuda::GemmVariant>> variants(std::begin(kVariants),
                                                                  std::end(kVariants));
  variants.push_back({"mma 32x32", cuda::GemmVariant::Mma});
  variants.push_back({"mma 64x64", cuda::GemmVariant::MmaLarge});
  for (const auto& [vname, v] : variants) {
    if (v == cuda::GemmVariant::Naive) continue;
    d.reset();
    if (!timed) {
      launch(v);
      check_outputs(c.label() + " " + vname, c, d, want, c.tol);
      continue;
    }
    const double us = time_graph_us(be, [&, v = v] { launch(v); });
    print_row(c.name, vname, us, c.flops, c.bytes,
              check_outputs(c.name + " " + vname, c, d, want, c.tol));
  }
}

}  // namespace

int main() {
  try {
    CudaBackend be(0);
    SerialBackend ref;
    print_device(be);
    print_header("gemm");
    // The op table's gemm cases (odd shapes, every transpose, alpha and beta) and its perf
    // products at batch 64 and 1024, then a square product beyond any layer.
    std::vector<OpCase> gemms = cases_of(Op::gemm, 64, false);
    for (OpCase& c : cases_of(Op::gemm, 1024, true)) gemms.push_back(std::move(c));
    gemms.push_back(test::gemm_case("square", {false, false, 1024, 1024, 1024, 1.f, 0.f}, true));
    for (const OpCase& c : gemms) gemm_case(be, ref, c);
    // The linear cases: every one of the table checked, the models' layers timed.
    for (int N : {64, 1024})
      for (Op op : {Op::linear_forward, Op::linear_backward})
        for (const OpCase& c : cases_of(op, N, N == 1024)) linear_case(be, ref, c, c.perf);
    for (int N : {64, 1024})
      for (Op op : {Op::linear_forward_16, Op::linear_backward_16})
        for (const OpCase& c : cases_of(op, N, N == 1024)) linear16_case(be, ref, c, c.perf);
    std::printf("\ngemm_lab: %d failures\n", failures());
    return failures() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_lab: %s\n", e.what());
    return 2;
  }
}
