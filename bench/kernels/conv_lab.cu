// Kernel lab: fused convolution forward (conv + bias + activation + pooling) and backward
// (dx, dw, db through the pooling and activation). Part 1 checks every variant against the
// serial backend on the test suite's odd shapes; part 2 times each variant on the LeNet-5 and
// Simard layers at batch 64 and 1024, against the unfused composition as the baseline.
// Times are per call inside a captured graph (what a layer costs inside the training step).
#include <string>

#include "backends/cuda/conv2d.cuh"
#include "bench/kernels/lab.hpp"
#include "tests/op_cases.hpp"

using namespace pcnn;
using namespace pcnn::lab;

namespace {

Conv2dShape make(int N, int C, int H, int W, int K, int R, int stride, int pad) {
  Conv2dShape s;
  s.N = N; s.C = C; s.H = H; s.W = W; s.K = K; s.R = R; s.S = R; s.stride = stride; s.pad = pad;
  return s;
}

ConvEpilogue epi_of(Activation a, PoolKind p, int window = 2, int stride = 2) {
  ConvEpilogue e;
  e.act = a; e.pool = p; e.pool_window = window; e.pool_stride = stride;
  return e;
}

Pool2dShape pooled(const Conv2dShape& s, const ConvEpilogue& e) {
  Pool2dShape p;
  p.N = s.N; p.C = s.K; p.H = s.P(); p.W = s.Q(); p.window = e.pool_window; p.stride = e.pool_stride;
  return p;
}

size_t y_size(const Conv2dShape& s, const ConvEpilogue& e) {
  return e.pool == PoolKind::None ? s.y_size() : pooled(s, e).y_size();
}

struct Case {
  std::string name;
  Conv2dShape s;
  ConvEpilogue epi;
};

// Host reference: the serial backend's fused calls (its default composition).
struct Reference {
  std::vector<float> x, w, b, act_out, y, dy, dx, dw, db;
};

Reference reference(SerialBackend& ref, const Case& c, uint32_t seed) {
  Reference r;
  const auto& s = c.s;
  r.x = random_floats(s.x_size(), seed);
  r.w = random_floats(s.w_size(), seed + 1, -0.3f, 0.3f);
  r.b = random_floats(size_t(s.K), seed + 2);
  r.act_out.resize(s.y_size());
  r.y.resize(y_size(s, c.epi));
  ref.conv2d_fused_forward(s, c.epi, r.x.data(), r.w.data(), r.b.data(), r.act_out.data(),
                           c.epi.pool == PoolKind::None ? r.act_out.data() : r.y.data());
  if (c.epi.pool == PoolKind::None) r.y = r.act_out;
  r.dy = random_floats(r.y.size(), seed + 3);
  std::vector<float> scratch(s.y_size());
  r.dx.resize(s.x_size());
  r.dw.resize(s.w_size());
  r.db.resize(size_t(s.K));
  ref.conv2d_fused_backward(s, c.epi, r.x.data(), r.w.data(), r.act_out.data(), r.dy.data(),
                            scratch.data(), r.dx.data(), r.dw.data(), r.db.data());
  return r;
}

struct Device {
  Buffer x, w, b, act_out, y, dy, dx, dw, db, scratch;
  Device(CudaBackend& be, const Reference& r)
      : x(be, r.x), w(be, r.w), b(be, r.b), act_out(be, r.act_out.size()), y(be, r.y.size()),
        dy(be, r.dy), dx(be, r.dx.size()), dw(be, r.dw.size()), db(be, r.db.size()),
        scratch(be, r.act_out.size()) {}
};

std::vector<std::pair<std::string, cuda::ConvForwardPlan>> forward_plans(bool all) {
  std::vector<std::pair<std::string, cuda::ConvForwardPlan>> v;
  v.push_back({"direct", {cuda::ConvFwdVariant::Direct, 0, 0}});
  v.push_back({"tiled auto", {cuda::ConvFwdVariant::Tiled, 0, 0}});
  v.push_back({"ring auto", {cuda::ConvFwdVariant::Ring, 0, 0}});
  for (int kpt : {1, 2, 4}) {
    if (!all && kpt == 1) continue;
    v.push_back({"tiled kpt" + std::to_string(kpt), {cuda::ConvFwdVariant::Tiled, kpt, 0}});
    v.push_back({"ring kpt" + std::to_string(kpt), {cuda::ConvFwdVariant::Ring, kpt, 0}});
    if (all) {
      v.push_back({"tiled kpt" + std::to_string(kpt) + " kt1",
                   {cuda::ConvFwdVariant::Tiled, kpt, 1}});
      v.push_back({"tiled kpt" + std::to_string(kpt) + " kt3",
                   {cuda::ConvFwdVariant::Tiled, kpt, 3}});
    }
  }
  return v;
}

std::vector<std::pair<std::string, cuda::ConvBackwardPlan>> backward_plans(bool all) {
  std::vector<std::pair<std::string, cuda::ConvBackwardPlan>> v;
  v.push_back({"direct", {cuda::ConvBwdVariant::Direct, 0, 0, 0}});
  v.push_back({"tiled auto", {cuda::ConvBwdVariant::Tiled, 0, 0, 0}});
  for (int kt : {1, 2, 4, 6, 8, 16}) {
    v.push_back({"tiled kt" + std::to_string(kt), {cuda::ConvBwdVariant::Tiled, kt, 0, 0}});
    if (!all && kt != 6 && kt != 16)
      for (int ch : {8, 16, 32, 64})
        v.push_back({"tiled kt" + std::to_string(kt) + " ch" + std::to_string(ch),
                     {cuda::ConvBwdVariant::Tiled, kt, ch, 0}});
    if (all) {
      v.push_back({"tiled kt" + std::to_string(kt) + " ch1 ct1",
                   {cuda::ConvBwdVariant::Tiled, kt, 1, 1}});
      v.push_back({"tiled kt" + std::to_string(kt) + " ch3 ct2",
                   {cuda::ConvBwdVariant::Tiled, kt, 3, 2}});
    }
  }
  return v;
}

// Part 1: every variant against serial, on every case (want_dx both ways for backward).
void check_all(CudaBackend& be, SerialBackend& ref, const std::vector<Case>& cases) {
  auto& ctx = be.context();
  int checked = 0;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    const Reference r = reference(ref, c, 1000 + uint32_t(ci) * 17);
    Device d(be, r);
    const bool in_place = c.epi.pool == PoolKind::None;
    for (const auto& entry : forward_plans(true)) {
    const auto& vname = entry.first;
    const auto plan = entry.second;
      if (!cuda::conv2d_forward_supported(ctx, c.s, c.epi, plan)) continue;
      d.act_out.poison();
      d.y.poison();
      float* y = in_place ? d.act_out.get() : d.y.get();
      cuda::conv2d_fused_forward(be, c.s, c.epi, d.x.get(), d.w.get(), d.b.get(),
                                 d.act_out.get(), y, plan);
      check(c.name + " fwd act_out " + vname, d.act_out.download(), r.act_out);
      if (!in_place) check(c.name + " fwd y " + vname, d.y.download(), r.y);
      ++checked;
    }
    // Upload the reference act_out so backward sees exactly the serial argmax.
    be.upload(d.act_out.get(), r.act_out.data(), r.act_out.size() * sizeof(float));
    for (const auto& [vname, plan] : backward_plans(true))
      for (bool want_dx : {true, false}) {
        if (!cuda::conv2d_backward_supported(ctx, c.s, c.epi, want_dx, plan)) continue;
        d.dx.poison();
        d.dw.poison();
        d.db.poison();
        cuda::conv2d_fused_backward(be, c.s, c.epi, d.x.get(), d.w.get(), d.act_out.get(),
                                    d.dy.get(), d.scratch.get(), want_dx ? d.dx.get() : nullptr,
                                    d.dw.get(), d.db.get(), plan);
        const std::string tag = c.name + " bwd " + vname + (want_dx ? "" : " (no dx)");
        if (want_dx) check(tag + " dx", d.dx.download(), r.dx);
        check(tag + " dw", d.dw.download(), r.dw);
        check(tag + " db", d.db.download(), r.db);
        ++checked;
      }
  }
  std::printf("checked %d variant runs on %zu cases: %d failures\n", checked, cases.size(),
              failures());
}

// Part 2: timings.
void time_case(CudaBackend& be, SerialBackend& ref, const Case& c) {
  auto& ctx = be.context();
  const Reference r = reference(ref, c, 7);
  Device d(be, r);
  const auto& s = c.s;
  const bool in_place = c.epi.pool == PoolKind::None;
  float* y = in_place ? d.act_out.get() : d.y.get();
  const double fwd_bytes = 4.0 * (s.x_size() + s.w_size() + s.y_size() + (in_place ? 0 : r.y.size()));
  print_header((c.name + " forward").c_str());
  {
    const double us = time_graph_us(be, [&] {
      be.Backend::conv2d_fused_forward(s, c.epi, d.x.get(), d.w.get(), d.b.get(), d.act_out.get(), y);
    });
    const double err = rel_error(in_place ? d.act_out.download() : d.y.download(), r.y);
    print_row(c.name, "unfused (default)", us, s.forward_flops(), fwd_bytes, err);
  }
  for (const auto& entry : forward_plans(false)) {
    const auto& vname = entry.first;
    const auto plan = entry.second;
    if (!cuda::conv2d_forward_supported(ctx, s, c.epi, plan)) continue;
    d.y.poison();
    d.act_out.poison();
    const double us = time_graph_us(be, [&] {
      cuda::conv2d_fused_forward(be, s, c.epi, d.x.get(), d.w.get(), d.b.get(), d.act_out.get(), y, plan);
    });
    const double err = std::max(rel_error(in_place ? d.act_out.download() : d.y.download(), r.y),
                                rel_error(d.act_out.download(), r.act_out));
    if (err > 1e-4) ++failures();
    print_row(c.name, vname, us, s.forward_flops(), fwd_bytes, err);
  }
  be.upload(d.act_out.get(), r.act_out.data(), r.act_out.size() * sizeof(float));
  const bool want_dx = c.s.C > 1;  // the first layer (C == 1 here) is called with dx = nullptr
  const double bwd_flops = s.forward_flops() * (want_dx ? 2 : 1);
  const double bwd_bytes = 4.0 * (s.x_size() * (want_dx ? 2 : 1) + s.w_size() * 2 + s.y_size() + r.y.size());
  print_header((c.name + (want_dx ? " backward (dx, dw, db)" : " backward (dw, db)")).c_str());
  float* dx = want_dx ? d.dx.get() : nullptr;
  auto bwd_err = [&] {
    double e = std::max(rel_error(d.dw.download(), r.dw), rel_error(d.db.download(), r.db));
    if (want_dx) e = std::max(e, rel_error(d.dx.download(), r.dx));
    return e;
  };
  {
    const double us = time_graph_us(be, [&] {
      be.Backend::conv2d_fused_backward(s, c.epi, d.x.get(), d.w.get(), d.act_out.get(), d.dy.get(),
                                        d.scratch.get(), dx, d.dw.get(), d.db.get());
    });
    print_row(c.name, "unfused (default)", us, bwd_flops, bwd_bytes, bwd_err());
  }
  for (const auto& entry : backward_plans(false)) {
    const auto& vname = entry.first;
    const auto plan = entry.second;
    if (!cuda::conv2d_backward_supported(ctx, s, c.epi, want_dx, plan)) continue;
    d.dx.poison();
    d.dw.poison();
    d.db.poison();
    const double us = time_graph_us(be, [&] {
      cuda::conv2d_fused_backward(be, s, c.epi, d.x.get(), d.w.get(), d.act_out.get(), d.dy.get(),
                                  d.scratch.get(), dx, d.dw.get(), d.db.get(), plan);
    });
    const double err = bwd_err();
    if (err > 1e-4) ++failures();
    print_row(c.name, vname, us, bwd_flops, bwd_bytes, err);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CudaBackend be(0);
    SerialBackend ref;
    print_device(be);
    const bool quick = argc > 1 && std::string(argv[1]) == "--check-only";
    std::vector<Case> cases;
    for (const auto& f : test::fused_cases()) cases.push_back({f.name, f.s, f.epi});
    for (const auto& c : test::conv_cases())
      cases.push_back({std::string(c.name) + " plain", c.s, ConvEpilogue{}});
    cases.push_back({"lenet conv2 N7 +avgpool", make(7, 6, 14, 14, 16, 5, 1, 0),
                     epi_of(Activation::Tanh, PoolKind::Avg)});
    cases.push_back({"odd P +maxpool2 (ragged, N3 C2 9x9 K5 3x3)", make(3, 2, 9, 9, 5, 3, 1, 0),
                     epi_of(Activation::ReLU, PoolKind::Max)});
    cases.push_back({"wide 40x40 K20 (N2 C3 5x5 pad2)", make(2, 3, 40, 40, 20, 5, 1, 2),
                     epi_of(Activation::ReLU, PoolKind::Max)});
    check_all(be, ref, cases);
    if (!quick) {
      for (int N : {64, 1024}) {
        const std::string n = " N" + std::to_string(N);
        time_case(be, ref, {"lenet5 conv1" + n, make(N, 1, 28, 28, 6, 5, 1, 2),
                            epi_of(Activation::ReLU, PoolKind::Max)});
        time_case(be, ref, {"lenet5 conv2" + n, make(N, 6, 14, 14, 16, 5, 1, 0),
                            epi_of(Activation::ReLU, PoolKind::Max)});
        time_case(be, ref, {"simard conv1" + n, make(N, 1, 29, 29, 5, 5, 2, 0),
                            epi_of(Activation::Tanh, PoolKind::None)});
        time_case(be, ref, {"simard conv2" + n, make(N, 5, 13, 13, 50, 5, 2, 0),
                            epi_of(Activation::Tanh, PoolKind::None)});
      }
    }
    std::printf("\nconv_lab: %d failures\n", failures());
    return failures() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv_lab: %s\n", e.what());
    return 2;
  }
}
