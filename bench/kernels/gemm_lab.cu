// Kernel lab: GEMM (naive vs the three shared-memory tile configs) and the fused linear layer
// (bias + activation in the GEMM epilogue; activation derivative folded into the backward
// operand loads, dw|db and dx in one launch) against the unfused composition. Each variant is
// checked against the serial backend; times are per call inside a captured graph.
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
    {"auto", cuda::GemmVariant::Auto}};

void gemm_case(CudaBackend& be, SerialBackend& ref, const char* name, bool ta, bool tb, int M,
               int N, int K, float alpha, float beta, bool check_serial) {
  auto& ctx = be.context();
  const int lda = ta ? M : K, ldb = tb ? K : N;
  const auto a = random_floats(size_t(M) * K, 1), b = random_floats(size_t(K) * N, 2);
  const auto c0 = random_floats(size_t(M) * N, 3);
  std::vector<float> want = c0;
  Buffer da(be, a), db(be, b), dc(be, c0);
  if (check_serial) {
    ref.gemm(ta, tb, M, N, K, alpha, a.data(), lda, b.data(), ldb, beta, want.data(), N);
  } else {  // too big for the CPU: the naive kernel is the reference
    cuda::gemm(ctx, ta, tb, M, N, K, alpha, da.get(), lda, db.get(), ldb, beta, dc.get(), N,
               cuda::GemmVariant::Naive);
    want = dc.download();
  }
  const double flops = 2.0 * M * N * K, bytes = 4.0 * (double(M) * K + double(K) * N + 2.0 * M * N);
  for (const auto& entry : kVariants) {
    const auto& vname = entry.first;
    const auto v = entry.second;
    if (v == cuda::GemmVariant::Naive && M * double(N) * K > 3e9) continue;
    be.upload(dc.get(), c0.data(), c0.size() * sizeof(float));
    cuda::gemm(ctx, ta, tb, M, N, K, alpha, da.get(), lda, db.get(), ldb, beta, dc.get(), N, v);
    const double err = rel_error(dc.download(), want);
    if (err > 1e-4) ++failures();
    // beta = 0 while timing, so repeated calls do not grow C
    const double us = time_graph_us(be, [&] {
      cuda::gemm(ctx, ta, tb, M, N, K, alpha, da.get(), lda, db.get(), ldb, 0.f, dc.get(), N, v);
    });
    print_row(std::string(name) + (ta ? " At" : " A") + (tb ? "Bt" : "B"), vname, us, flops,
              bytes, err);
  }
}

void linear_case(CudaBackend& be, SerialBackend& ref, int N, int in, int out, Activation act) {
  auto& ctx = be.context();
  const std::string name = "linear " + std::to_string(N) + "x" + std::to_string(in) + "->" +
                           std::to_string(out) + (act == Activation::ReLU ? " relu" : act == Activation::Tanh ? " tanh" : "");
  const auto x = random_floats(size_t(N) * in, 11), w = random_floats(size_t(out) * in, 12, -0.2f, 0.2f);
  const auto b = random_floats(size_t(out), 13), dy = random_floats(size_t(N) * out, 14);
  std::vector<float> y(size_t(N) * out), dx(size_t(N) * in), dw(size_t(out) * in), dbias(out), scratch(size_t(N) * out);
  ref.linear_forward(N, in, out, act, x.data(), w.data(), b.data(), y.data());
  ref.linear_backward(N, in, out, act, x.data(), w.data(), y.data(), dy.data(), scratch.data(),
                      dx.data(), dw.data(), dbias.data());
  Buffer dxi(be, x), dwt(be, w), dbi(be, b), ddy(be, dy), dyo(be, y.size()), ddx(be, dx.size()),
      ddw(be, dw.size()), ddb(be, dbias.size()), dscr(be, scratch.size());
  const double ff = 2.0 * N * in * out, fb = 4.0 * N * in * out;
  const double bf = 4.0 * (double(N) * in + double(in) * out + 2.0 * N * out);
  const double bb = 4.0 * (2.0 * N * in + 2.0 * in * out + 2.0 * N * out);
  print_header(name.c_str());
  {
    dyo.poison();
    const double us = time_graph_us(be, [&] {
      be.Backend::linear_forward(N, in, out, act, dxi.get(), dwt.get(), dbi.get(), dyo.get());
    });
    print_row(name + " fwd", "unfused (default)", us, ff, bf, rel_error(dyo.download(), y));
  }
  for (const auto& entry : kVariants) {
    const auto& vname = entry.first;
    const auto v = entry.second;
    if (v == cuda::GemmVariant::Naive) continue;
    dyo.poison();
    const double us = time_graph_us(be, [&] {
      cuda::linear_forward(ctx, N, in, out, act, dxi.get(), dwt.get(), dbi.get(), dyo.get(), v);
    });
    const double err = rel_error(dyo.download(), y);
    if (err > 1e-4) ++failures();
    print_row(name + " fwd", vname, us, ff, bf, err);
  }
  be.upload(dyo.get(), y.data(), y.size() * sizeof(float));
  auto bwd_err = [&] {
    return std::max({rel_error(ddx.download(), dx), rel_error(ddw.download(), dw),
                     rel_error(ddb.download(), dbias)});
  };
  {
    ddx.poison(); ddw.poison(); ddb.poison();
    const double us = time_graph_us(be, [&] {
      be.Backend::linear_backward(N, in, out, act, dxi.get(), dwt.get(), dyo.get(), ddy.get(),
                                  dscr.get(), ddx.get(), ddw.get(), ddb.get());
    });
    print_row(name + " bwd", "unfused (default)", us, fb, bb, bwd_err());
  }
  for (const auto& entry : kVariants) {
    const auto& vname = entry.first;
    const auto v = entry.second;
    if (v == cuda::GemmVariant::Naive) continue;
    ddx.poison(); ddw.poison(); ddb.poison();
    const double us = time_graph_us(be, [&] {
      cuda::linear_backward(ctx, N, in, out, act, dxi.get(), dwt.get(), dyo.get(), ddy.get(),
                            ddx.get(), ddw.get(), ddb.get(), v);
    });
    const double err = bwd_err();
    if (err > 1e-4) ++failures();
    print_row(name + " bwd", vname, us, fb, bb, err);
  }
  // The first dense layer after a conv is called with dx; the check above covers it. Also check
  // dx = nullptr and db = nullptr once.
  ddw.poison();
  cuda::linear_backward(ctx, N, in, out, act, dxi.get(), dwt.get(), dyo.get(), ddy.get(), nullptr,
                        ddw.get(), nullptr);
  check(name + " bwd (no dx, no db) dw", ddw.download(), dw);
}

}  // namespace

int main() {
  try {
    CudaBackend be(0);
    SerialBackend ref;
    print_device(be);
    print_header("gemm");
    const int shapes[][3] = {{64, 120, 400}, {7, 13, 5}, {33, 17, 129}, {1024, 120, 400}, {120, 401, 64}};
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const auto& sh : shapes)
          gemm_case(be, ref, ("gemm " + std::to_string(sh[0]) + "x" + std::to_string(sh[1]) + "x" +
                              std::to_string(sh[2])).c_str(),
                    ta, tb, sh[0], sh[1], sh[2], sh[0] == 33 ? -0.7f : 1.f, sh[0] == 33 ? 0.5f : 0.f,
                    true);
    gemm_case(be, ref, "gemm 1024^3", false, false, 1024, 1024, 1024, 1.f, 0.f, true);
    for (int N : {64, 1024}) {
      linear_case(be, ref, N, 400, 120, Activation::ReLU);
      linear_case(be, ref, N, 120, 84, Activation::ReLU);
      linear_case(be, ref, N, 84, 10, Activation::None);
      linear_case(be, ref, N, 1250, 100, Activation::Tanh);
    }
    std::printf("\ngemm_lab: %d failures\n", failures());
    return failures() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_lab: %s\n", e.what());
    return 2;
  }
}
