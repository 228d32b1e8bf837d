// Kernel lab: fused convolution forward (conv + bias + activation + pooling) and backward
// (dx, dw, db through the pooling and activation). Part 1 checks every variant against the
// serial backend on the op table's fused-convolution cases (odd shapes, every epilogue); part 2
// times each variant on the table's LeNet-5 and Simard layers at batch 64 and 1024, in fp32 and
// bf16, against the unfused composition (the composed default in bf16) as the baseline. Times are per call inside a captured graph (what a layer
// costs inside the training step).
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cuda/conv2d.cuh"
#include "bench/kernels/lab.hpp"

using namespace pcnn;
using namespace pcnn::lab;

namespace {

std::vector<std::pair<std::string, cuda::ConvForwardPlan>> forward_plans(bool all) {
  std::vector<std::pair<std::string, cuda::ConvForwardPlan>> v;
  v.push_back({"direct", {cuda::ConvFwdVariant::Direct, 0, 0}});
  v.push_back({"gemm", {cuda::ConvFwdVariant::Gemm, 0, 0}});
  v.push_back({"tiled auto", {cuda::ConvFwdVariant::Tiled, 0, 0}});
  v.push_back({"ring auto", {cuda::ConvFwdVariant::Ring, 0, 0}});
  v.push_back({"mma", {cuda::ConvFwdVariant::Mma, 0, 0}});  // 16-bit only
  for (int kpt : {2, 1, 3, 4})  // 5x5 at unit stride, pooled only
    v.push_back({"strip kpt" + std::to_string(kpt), {cuda::ConvFwdVariant::Strip, kpt, 0}});
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
  v.push_back({"gemm", {cuda::ConvBwdVariant::Gemm, 0, 0, 0}});
  v.push_back({"split auto", {cuda::ConvBwdVariant::Split, 0, 0, 0}});
  v.push_back({"tiled generic", {cuda::ConvBwdVariant::Tiled, 0, 0, 0, 0, true}});
  v.push_back({"split generic", {cuda::ConvBwdVariant::Split, 0, 0, 0, 0, true}});
  v.push_back({"mma", {cuda::ConvBwdVariant::Mma}});  // 16-bit only
  // One channel, 5x5, pooled, no dx: filters a thread, chunks, threads a block.
  for (int kpt : {2, 1}) {
    cuda::ConvBackwardPlan p{cuda::ConvBwdVariant::Strip, kpt};
    v.push_back({"strip kpt" + std::to_string(kpt), p});
    for (int th : {32, 128}) {
      p.dw_threads = th;
      v.push_back({"strip kpt" + std::to_string(kpt) + " th" + std::to_string(th), p});
    }
  }
  // Max-pooled, from the kept maxima (one channel without dx: the weight gradient alone; else
  // the whole layer): the rule's chunks and others; the layer kernel's warps a block.
  v.push_back({"argmax", {cuda::ConvBwdVariant::Argmax}});
  for (int ch : {32, 64, 128, 256, 512, 1024})
    v.push_back({"argmax ch" + std::to_string(ch), {cuda::ConvBwdVariant::Argmax, 0, ch}});
  for (int th : {128, 256}) {
    cuda::ConvBackwardPlan p{cuda::ConvBwdVariant::Argmax};
    p.dw_threads = th;
    v.push_back({"argmax th" + std::to_string(th), p});
  }
  // Split's data gradient one image a lane (strided shapes it is compiled for), and without it.
  {
    cuda::ConvBackwardPlan p{cuda::ConvBwdVariant::Split};
    p.dx_lanes = -1;
    v.push_back({"split no lanes", p});
    for (int warps : {8, 4, 2})
      for (int jw : {7, 4}) {
        p.dx_lanes = warps;
        p.dx_lanes_jw = jw;
        v.push_back({"split lanes w" + std::to_string(warps) + " jw" + std::to_string(jw), p});
      }
    p.dx_lanes_ksplit = 1;
    p.dx_lanes = 8;
    for (int jw : {7, 4}) {
      p.dx_lanes_jw = jw;
      v.push_back({"split lanes w8 jw" + std::to_string(jw) + " one warp", p});
    }
    p.dx_lanes_jw = 7;
    p.dx_lanes_ksplit = 0;
    p.dx_lanes_kc = 5;
    v.push_back({"split lanes kc5", p});
    p.dx_lanes_kc = 0;
    for (int chunks : {4, 8, 11, 16}) {  // the weight gradient too, the batch in so many chunks
      p.dw_lanes = chunks;
      v.push_back({"split lanes dw ch" + std::to_string(chunks), p});
    }
  }
  for (int ct : {1, 2, 4})
    for (int th : {64, 128, 256})
      if (!all || ct != 4)
        v.push_back({"split tiles" + std::to_string(ct) + " th" + std::to_string(th),
                     {cuda::ConvBwdVariant::Split, 0, 0, ct, th}});
  // Smaller weight-gradient blocks, two or four a multiprocessor (and as many more chunks).
  for (int th : {128, 256}) {
    cuda::ConvBackwardPlan p{cuda::ConvBwdVariant::Tiled};
    p.dw_threads = th;
    v.push_back({"tiled dw th" + std::to_string(th), p});
    p.variant = cuda::ConvBwdVariant::Split;
    v.push_back({"split dw th" + std::to_string(th), p});
  }
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

// The launches of one case on the case's tensors (named by tests/op_table.cpp): fused forward or
// backward with a plan. kept_of: what the forward keeps for the backward.
ConvKept kept_of(const OpCase& c, const DeviceTensors& d) {
  ConvKept kept;
  if (keeps_argmax(c.p.epi)) kept.argmax = d.u8("argmax");
  if (keeps_act_out(c.p.epi)) kept.act_out = d.f("act_out");
  return kept;
}
void forward(CudaBackend& be, const OpCase& c, const DeviceTensors& d,
             const cuda::ConvForwardPlan& plan) {
  cuda::conv2d_fused_forward(be, c.p.conv, c.p.epi, d.f("x"), d.f("w"), d.f("b"), kept_of(c, d),
                             d.f("scratch"), d.f("y"), plan);
}
void backward(CudaBackend& be, const OpCase& c, const DeviceTensors& d,
              const cuda::ConvBackwardPlan& plan) {
  cuda::conv2d_fused_backward(be, c.p.conv, c.p.epi, d.f("x"), d.f("w"), kept_of(c, d), d.f("y"),
                              d.f("dy"), d.f("scratch"), c.p.want_dx ? d.f("dx") : nullptr,
                              d.f("dw"), d.f("db"), plan);
}

// The same in 16 bits (x, y, dy, dx stored in bf16 or fp16: the op table's 16-bit cases), where
// the plan's kernels read and write them themselves.
void forward16(CudaBackend& be, const OpCase& c, const DeviceTensors& d,
               const cuda::ConvForwardPlan& plan) {
  const bool x32 = c.p.x32;  // a first layer's fp32 input
  cuda::conv2d_fused_forward_16(be, c.p.precision, c.p.conv, c.p.epi, x32 ? nullptr : d.u16("x"),
                                x32 ? d.f("x") : nullptr, d.f("w"), d.f("b"), kept_of(c, d),
                                d.u16("y"), plan);
}
void backward16(CudaBackend& be, const OpCase& c, const DeviceTensors& d,
                const cuda::ConvBackwardPlan& plan) {
  const bool x32 = c.p.x32;
  cuda::conv2d_fused_backward_16(be, c.p.precision, c.p.conv, c.p.epi, x32 ? nullptr : d.u16("x"),
                                 x32 ? d.f("x") : nullptr, d.f("w"), kept_of(c, d), d.u16("y"),
                                 d.u16("dy"), c.p.want_dx ? d.u16("dx") : nullptr, d.f("dw"),
                                 d.f("db"), plan);
}

// Part 1: every variant against serial, on every fused case of the op table (the backward cases
// come with and without dx), in fp32 and, where the variant reads and writes 16 bits itself, in
// bf16 and fp16 (at the op table's 16-bit tolerances).
struct Tally {
  int checked = 0, cases = 0;
};

// Every case of op, every plan that `usable(case, plan)` allows, run by `run(case, tensors, plan)`.
template <class Plans, class Usable, class Run>
void check_op(CudaBackend& be, SerialBackend& ref, Op op, const char* dir, const Plans& plans,
              Usable usable, Run run, Tally& t) {
  const bool sixteen = test::is_fused_16(op);
  for (const OpCase& c : cases_of(op, 64, false)) {
    const RunResult want = test::run_case(ref, c);
    DeviceTensors d(be, test::case_tensors(c));
    ++t.cases;
    for (const auto& [vname, plan] : plans) {
      if (!usable(c, plan)) continue;
      d.reset();
      run(c, d, plan);
      check_outputs(c.name + dir + vname, c, d, want, sixteen ? c.tol : kLabTol);
      ++t.checked;
    }
  }
}

void check_all(CudaBackend& be, SerialBackend& ref) {
  auto& ctx = be.context();
  Tally t;
  const auto fwd_ok = [&](const OpCase& c, const cuda::ConvForwardPlan& plan) {
    return cuda::conv2d_forward_supported(ctx, c.p.conv, c.p.epi, plan);
  };
  const auto bwd_ok = [&](const OpCase& c, const cuda::ConvBackwardPlan& plan) {
    return cuda::conv2d_backward_supported(ctx, c.p.conv, c.p.epi, c.p.want_dx, plan);
  };
  const auto fwd16_ok = [&](const OpCase& c, const cuda::ConvForwardPlan& plan) {
    return cuda::conv2d_forward_native_16(ctx, c.p.conv, c.p.epi, !c.p.x32, plan);
  };
  const auto bwd16_ok = [&](const OpCase& c, const cuda::ConvBackwardPlan& plan) {
    return cuda::conv2d_backward_native_16(ctx, c.p.conv, c.p.epi, true, c.p.want_dx, !c.p.x32,
                                           plan);
  };
  const auto on = [&](auto launch) {
    return [&be, launch](const OpCase& c, const DeviceTensors& d, const auto& plan) {
      launch(be, c, d, plan);
    };
  };
  const auto fwds = forward_plans(true);
  const auto bwds = backward_plans(true);
  check_op(be, ref, Op::conv2d_fused_forward, " fwd ", fwds, fwd_ok, on(forward), t);
  check_op(be, ref, Op::conv2d_fused_backward, " bwd ", bwds, bwd_ok, on(backward), t);
  check_op(be, ref, Op::conv2d_fused_forward_16, " fwd ", fwds, fwd16_ok, on(forward16), t);
  check_op(be, ref, Op::conv2d_fused_backward_16, " bwd ", bwds, bwd16_ok, on(backward16), t);
  std::printf("checked %d variant runs on %d cases: %d failures\n", t.checked, t.cases,
              failures());
}

// The timed filter tiles of plans 3-5 (PCNN_CONV_DW_BLOCKS, CudaContext::dw_plan) against
// the rule's tile alone (plan 1): the same bits on the backward of every model layer at 64 and
// 128 images, fp32 and bf16, as conv2d_backward.cu tile_choice promises. Two backends on the one
// GPU, each with the plan its context read when it was made.
void check_tile_choice_bits(const char* plan) {
  const char* was = std::getenv("PCNN_CONV_DW_BLOCKS");
  const std::string saved = was ? was : "";
  setenv("PCNN_CONV_DW_BLOCKS", "1", 1);
  CudaBackend rule(0);
  setenv("PCNN_CONV_DW_BLOCKS", plan, 1);
  CudaBackend timed(0);
  if (was) setenv("PCNN_CONV_DW_BLOCKS", saved.c_str(), 1);
  else unsetenv("PCNN_CONV_DW_BLOCKS");
  int compared = 0;
  for (int N : {64, 128})
    for (Op op : {Op::conv2d_fused_backward, Op::conv2d_fused_backward_16})
      for (const OpCase& c : cases_of(op, N, true)) {
        if (c.name.rfind("fp16", 0) == 0) continue;  // the same kernels as bf16
        DeviceTensors a(rule, test::case_tensors(c)), b(timed, test::case_tensors(c));
        for (int call = 0; call < 2; ++call) {  // the first call times; the second takes the choice
          if (test::is_fused_16(op)) {
            backward16(rule, c, a, {});
            backward16(timed, c, b, {});
          } else {
            backward(rule, c, a, {});
            backward(timed, c, b, {});
          }
        }
        const auto x = a.outputs(), y = b.outputs();
        bool same = x.size() == y.size();
        for (size_t i = 0; same && i < x.size(); ++i)
          same = x[i].values.size() == y[i].values.size() &&
                 std::memcmp(x[i].values.data(), y[i].values.data(),
                             x[i].values.size() * sizeof(float)) == 0;
        if (!same) {
          ++failures();
          std::printf("  FAIL %s: plan %s's tile gives other bits than plan 1's\n",
                      c.name.c_str(), plan);
        }
        ++compared;
      }
  std::printf("plan %s against plan 1, bit for bit: %d cases\n", plan, compared);
}

// Part 2: timings of one case (a model's layer), forward or backward, fp32 or 16-bit, every
// variant that can run it, against the base class's composed default.
void time_case(CudaBackend& be, SerialBackend& ref, const OpCase& c) {
  auto& ctx = be.context();
  const RunResult want = test::run_case(ref, c);
  DeviceTensors d(be, test::case_tensors(c));
  const bool fwd = c.op == Op::conv2d_fused_forward || c.op == Op::conv2d_fused_forward_16;
  const bool sixteen = test::is_fused_16(c.op);
  const test::Tolerance tol = sixteen ? c.tol : kLabTol;
  const auto& s = c.p.conv;
  print_header(c.label());
  {
    const double us = time_graph_us(be, [&] {
      if (sixteen)
        test::composed_16(c).launch(be, c.p, d);
      else if (fwd)
        be.Backend::conv2d_fused_forward(s, c.p.epi, d.f("x"), d.f("w"), d.f("b"), kept_of(c, d),
                                         d.f("scratch"), d.f("y"));
      else
        be.Backend::conv2d_fused_backward(s, c.p.epi, d.f("x"), d.f("w"), kept_of(c, d), d.f("y"),
                                          d.f("dy"), d.f("scratch"),
                                          c.p.want_dx ? d.f("dx") : nullptr, d.f("dw"), d.f("db"));
    });
    print_row(c.name, "unfused (default)", us, c.flops, c.bytes,
              check_outputs(c.name + " unfused", c, d, want, tol));
  }
  auto row = [&](const std::string& vname, const std::function<void()>& launch) {
    d.reset();
    const double us = time_graph_us(be, launch);
    print_row(c.name, vname, us, c.flops, c.bytes,
              check_outputs(c.name + " " + vname, c, d, want, tol));
  };
  if (fwd) {
    for (const auto& [vname, plan] : forward_plans(false)) {
      const bool can = sixteen ? cuda::conv2d_forward_native_16(ctx, s, c.p.epi, !c.p.x32, plan)
                               : cuda::conv2d_forward_supported(ctx, s, c.p.epi, plan);
      if (!can) continue;
      if (sixteen) row(vname, [&, plan = plan] { forward16(be, c, d, plan); });
      else row(vname, [&, plan = plan] { forward(be, c, d, plan); });
    }
  } else {
    for (const auto& [vname, plan] : backward_plans(false)) {
      const bool can = sixteen ? cuda::conv2d_backward_native_16(ctx, s, c.p.epi, true,
                                                                 c.p.want_dx, !c.p.x32, plan)
                               : cuda::conv2d_backward_supported(ctx, s, c.p.epi, c.p.want_dx,
                                                                 plan);
      if (!can) continue;
      if (sixteen) row(vname, [&, plan = plan] { backward16(be, c, d, plan); });
      else row(vname, [&, plan = plan] { backward(be, c, d, plan); });
    }
  }
}
}  // namespace

int main(int argc, char** argv) {
  try {
    CudaBackend be(0);
    SerialBackend ref;
    print_device(be);
    // --check-only: part 1 alone; --time N NAME: part 2 alone, at batch N, on the layers whose
    // case name holds NAME (e.g. --time 128 "c3p conv2").
    const std::string mode = argc > 1 ? argv[1] : "";
    std::vector<int> batches = {64, 1024};
    std::string only;
    if (mode == "--time" && argc > 3) {
      batches = {std::stoi(argv[2])};
      only = argv[3];
    } else {
      check_all(be, ref);
      check_tile_choice_bits("3");
      check_tile_choice_bits("4");
      check_tile_choice_bits("5");
    }
    if (mode != "--check-only") {
      // The layers as the models call them (the first layer, C == 1, wants no dx), in fp32 and
      // bf16 (the 16-bit cases' names begin with their precision; fp16 runs the same kernels).
      for (int N : batches)
        for (Op op : {Op::conv2d_fused_forward, Op::conv2d_fused_backward,
                      Op::conv2d_fused_forward_16, Op::conv2d_fused_backward_16})
          for (const OpCase& c : cases_of(op, N, true))
            if (c.name.find(only) != std::string::npos && c.name.rfind("fp16", 0) != 0)
              time_case(be, ref, c);
    }
    std::printf("\nconv_lab: %d failures\n", failures());
    return failures() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv_lab: %s\n", e.what());
    return 2;
  }
}
