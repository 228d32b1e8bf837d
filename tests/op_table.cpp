// The cases of the op table, one add_* function per op family: odd shapes on purpose (non-square,
// stride 2 and 3, pad 0/1/2, C=1 and 3, N=1 and 5), every activation and pooling kind of
// core/vocabulary.hpp by loop (a new row is tested with no edit here), and the real LeNet-5,
// Simard-2003 and MLP layers at the perf batch. FLOPs count a multiply-add as two; bytes are what
// the op must read and write at least (each tensor once).
#include "tests/op_table.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>

#include "core/activation_math.hpp"
#include "core/augment_math.hpp"
#include "core/check.hpp"
#include "core/pool_math.hpp"
#include "tests/compare.hpp"

namespace pcnn::test {

namespace {

// Finite differences of float forward passes: the estimate carries ~1e-3 of noise at eps = 1e-2,
// a wrong gradient is off by O(rms).
constexpr const char* kGradWhy = "float forward passes: ~1e-3 noise at eps 1e-2; a wrong "
                                 "gradient is off by O(rms)";

// ---- inputs ----------------------------------------------------------------------------------

// Values 0.05 apart in random order: no max-pooling window holds a tie, nor a near one that a
// finite difference at eps = 1e-2 could cross.
std::vector<float> distinct(Rng& rng, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.05f * (float(i) - float(n / 2));
  for (size_t i = n; i > 1; --i) std::swap(v[i - 1], v[rng.next_u64() % i]);
  return v;
}

std::vector<float> signs(Rng& rng, std::vector<float> v) {
  for (auto& x : v)
    if (rng.next_u64() & 1) x = -x;
  return v;
}

// |x| in [0.05, 3]: off ReLU's kink at 0 by more than any finite-difference step.
std::vector<float> off_kink(Rng& rng, size_t n) { return signs(rng, uniform(rng, n, 0.05f, 3.f)); }

// For the gradient cases whose activation may have a kink. x: multiples of 1/4 in [-1, 1]; w:
// multiples of 1/8 in [-1/2, 1/2]; so every sum of products is a multiple of 1/32, exact in
// float, and a bias that is an odd multiple of 1/64 keeps each pre-activation at least 1/64 from
// any multiple of 1/32, where kinks sit (ReLU's 0, a clipped activation's +-1 or 6) — farther
// than a finite-difference step moves it (eps * max(|x|, |w|, 1) = 1e-2).
std::vector<float> grid(Rng& rng, size_t n, float step, int steps) {
  std::vector<float> v(n);
  for (auto& x : v) x = step * float(int(rng.next_u64() % uint64_t(2 * steps + 1)) - steps);
  return v;
}
std::vector<float> odd_64ths(Rng& rng, size_t n) {
  std::vector<float> v(n);
  for (auto& x : v) x = float(2 * int(rng.next_u64() % 64) - 63) / 64.f;
  return v;
}

// Max pooling after a 1x1 convolution of one channel, y = w x + b: w = +-1 and x values 0.05
// apart keep each window's maximum 0.05 clear of the runner-up, and b = 0.025 + a multiple of
// 0.05 keeps every value 0.025 from 0, so no step crosses a tie or a kink (|x| <= 2.1 here).
std::vector<float> odd_20ths(Rng& rng, size_t n) {
  std::vector<float> v(n);
  for (auto& x : v) x = 0.025f + 0.05f * float(int(rng.next_u64() % 40) - 20);
  return v;
}

// How a case's x, w and b are drawn.
enum class Inputs {
  Random,   // uniform
  Grid,     // grid(): no pre-activation near a kink
  Ordered,  // 1x1 convolution of one channel before max pooling: no ties either
};

struct Weights {
  std::vector<float> x, w, b;
};
Weights draw(Rng& r, Inputs inputs, size_t nx, size_t nw, size_t nb, float w_range) {
  if (inputs == Inputs::Grid) return {grid(r, nx, 0.25f, 4), grid(r, nw, 0.125f, 4), odd_64ths(r, nb)};
  if (inputs == Inputs::Ordered)
    return {distinct(r, nx), signs(r, std::vector<float>(nw, 1.f)), odd_20ths(r, nb)};
  return {uniform(r, nx), uniform(r, nw, -w_range, w_range), uniform(r, nb)};
}

// What a forward pass leaves for the backward ops to read: act(random).
std::vector<float> activated(Rng& rng, Activation act, size_t n, float lo = -2.f, float hi = 2.f) {
  std::vector<float> v = uniform(rng, n, lo, hi);
  for (auto& x : v) x = activate(act, x);
  return v;
}

std::vector<float> integers(Rng& rng, size_t n, int below) {
  std::vector<float> v(n);
  for (auto& x : v) x = float(rng.next_u64() % uint64_t(below));
  return v;
}

// ---- names -----------------------------------------------------------------------------------

std::string describe(const Conv2dShape& s) {
  std::ostringstream os;
  os << "N" << s.N << " C" << s.C << " " << s.H << "x" << s.W << " K" << s.K << " " << s.R << "x"
     << s.S;
  if (s.stride != 1) os << " stride" << s.stride;
  if (s.pad) os << " pad" << s.pad;
  return os.str();
}

std::string describe(const Pool2dShape& s) {
  std::ostringstream os;
  os << "N" << s.N << " C" << s.C << " " << s.H << "x" << s.W << " " << s.window << "/" << s.stride;
  if (s.pad) os << " pad" << s.pad;
  return os.str();
}

std::string describe(const ConvEpilogue& e) {
  std::string d = std::string(" +") + activation_name(e.act);
  d += std::string(" +") + pool_name(e.pool);
  if (e.pool != PoolKind::None)
    d += " " + std::to_string(e.pool_window) + "/" + std::to_string(e.pool_stride);
  return d;
}

Conv2dShape conv_shape(int N, int C, int H, int W, int K, int R, int S, int stride, int pad) {
  Conv2dShape s;
  s.N = N; s.C = C; s.H = H; s.W = W; s.K = K; s.R = R; s.S = S; s.stride = stride; s.pad = pad;
  return s;
}

Pool2dShape pool_shape(int N, int C, int H, int W, int window, int stride, int pad = 0) {
  Pool2dShape s;
  s.N = N; s.C = C; s.H = H; s.W = W; s.window = window; s.stride = stride; s.pad = pad;
  return s;
}

ConvEpilogue epilogue(Activation act, PoolKind pool, int window = 2, int stride = 2) {
  ConvEpilogue e;
  e.act = act; e.pool = pool; e.pool_window = window; e.pool_stride = stride;
  return e;
}

OpCase make_case(Op op, std::string name, const OpParams& p, Tolerance tol, double flops,
                 double bytes, bool perf) {
  OpCase c;
  c.op = op; c.name = std::move(name); c.p = p; c.tol = tol;
  c.flops = flops; c.bytes = bytes; c.perf = perf;
  return c;
}

// The same case with the named tensors one float past an aligned address, as a layer's weights
// and bias are when they are slices of the parameter arena (Simard's conv2 weights start at
// float 130): a kernel that assumes 16-byte alignment fails here.
OpCase unaligned(OpCase c, std::vector<std::string> names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
  c.name += " (" + list + " unaligned)";
  c.tensors = [base = c.tensors, names](const OpParams& p, Rng& r) {
    std::vector<TensorSpec> v = base(p, r);
    for (auto& t : v)
      if (std::find(names.begin(), names.end(), t.name) != names.end()) t = misaligned(t);
    return v;
  };
  c.perf = false;
  return c;
}

// A gradient check: `backward` (usually the launch of the backward op's own cases) against
// central differences of the case's forward launch.
GradSpec gradient(std::vector<Op> checks, std::string of, std::vector<std::string> wrt,
                  Launch backward, std::vector<TensorSpec> extra = {}) {
  GradSpec g;
  g.checks = std::move(checks);
  g.of = std::move(of);
  g.wrt = std::move(wrt);
  g.backward = std::move(backward);
  g.extra = std::move(extra);
  g.why = kGradWhy;
  return g;
}

// ---- shapes ----------------------------------------------------------------------------------

// A test shape of the convolution or pooling ops, with its name.
template <class Shape>
struct NamedShape {
  const char* name;
  Shape s;
  bool grad;  // small enough for finite differences
};
using ConvShape = NamedShape<Conv2dShape>;

std::vector<ConvShape> conv_test_shapes() {
  return {
      {"lenet5 conv1", conv_shape(5, 1, 28, 28, 6, 5, 5, 1, 2), false},
      {"lenet5 conv2", conv_shape(3, 6, 14, 14, 16, 5, 5, 1, 0), false},
      {"simard conv1", conv_shape(2, 1, 29, 29, 5, 5, 5, 2, 0), false},
      {"simard conv2", conv_shape(2, 5, 13, 13, 50, 5, 5, 2, 0), false},
      {"non-square", conv_shape(1, 3, 7, 9, 4, 3, 3, 1, 1), true},
      {"1x1", conv_shape(5, 3, 5, 6, 7, 1, 1, 1, 0), true},
      {"rectangular kernel", conv_shape(2, 2, 9, 7, 3, 3, 5, 2, 2), true},
      {"tiny", conv_shape(1, 1, 5, 5, 1, 3, 3, 1, 0), false},
      {"stride3", conv_shape(2, 4, 11, 10, 5, 3, 3, 3, 1), true},
  };
}

struct Layer {
  std::string name;
  Conv2dShape s;
  ConvEpilogue epi;
};

// The convolutions of LeNet-5 and Simard-2003 at batch N, with the epilogues their layers fuse,
// a wider second layer (examples/models/wide.json's, 16 -> 32 channels) and both layers of
// fast3x3 (`--recipe fast`: 3x3, pad 1).
std::vector<Layer> model_conv_layers(int N) {
  const ConvEpilogue relu_max = epilogue(Activation::ReLU, PoolKind::Max);
  const ConvEpilogue tanh = epilogue(Activation::Tanh, PoolKind::None);
  return {
      {"lenet5 conv1", conv_shape(N, 1, 28, 28, 6, 5, 5, 1, 2), relu_max},
      {"lenet5 conv2", conv_shape(N, 6, 14, 14, 16, 5, 5, 1, 0), relu_max},
      {"simard conv1", conv_shape(N, 1, 29, 29, 5, 5, 5, 2, 0), tanh},
      {"simard conv2", conv_shape(N, 5, 13, 13, 50, 5, 5, 2, 0), tanh},
      {"wide conv2", conv_shape(N, 16, 14, 14, 32, 5, 5, 1, 0), relu_max},
      {"c3p conv1", conv_shape(N, 1, 28, 28, 16, 3, 3, 1, 1), relu_max},
      {"c3p conv2", conv_shape(N, 16, 14, 14, 32, 3, 3, 1, 1), relu_max},
  };
}

struct Dense {
  std::string name;
  int N, in, out;
  Activation act;
};

// The dense layers of LeNet-5, Simard-2003 and the MLP at batch N.
std::vector<Dense> model_dense_layers(int N) {
  return {
      {"lenet5 fc1", N, 400, 120, Activation::ReLU}, {"lenet5 fc2", N, 120, 84, Activation::ReLU},
      {"lenet5 fc3", N, 84, 10, Activation::None},   {"simard fc1", N, 1250, 100, Activation::Tanh},
      {"simard fc2", N, 100, 10, Activation::None},  {"mlp fc1", N, 784, 300, Activation::ReLU},
  };
}

// ---- gemm ------------------------------------------------------------------------------------

void add_gemm(std::vector<OpCase>& t, int B) {
  struct Shape { const char* name; int M, N, K; float alpha, beta; };
  const Shape shapes[] = {
      {"lenet5 fc1", 64, 120, 400, 1.f, 0.f}, {"lenet5 fc3", 5, 10, 84, 1.f, 0.f},
      {"ragged beta1", 7, 13, 5, 1.f, 1.f},   {"ragged alpha-0.7 beta0.5", 33, 17, 129, -0.7f, 0.5f},
      {"wide", 3, 600, 70, 1.f, 0.f},         {"deep alpha0.5", 40, 30, 700, 0.5f, 0.f},
      {"single", 1, 1, 1, 1.f, 0.f},
  };
  for (const Shape& s : shapes)
    for (int tr = 0; tr < 4; ++tr)
      t.push_back(gemm_case(s.name, {bool(tr & 1), bool(tr & 2), s.M, s.N, s.K, s.alpha, s.beta},
                            false));
  // The three products of a dense layer (LeNet-5 fc1) and a square one.
  t.push_back(gemm_case("fc1 forward x w^T", {false, true, B, 120, 400, 1.f, 0.f}, true));
  t.push_back(gemm_case("fc1 dw = dy^T x", {true, false, 120, 400, B, 1.f, 0.f}, true));
  t.push_back(gemm_case("fc1 dx = dy w", {false, false, B, 400, 120, 1.f, 0.f}, true));
  t.push_back(gemm_case("square", {false, false, 256, 256, 256, 1.f, 0.f}, true));
}

// ---- convolution -----------------------------------------------------------------------------

double conv_bytes(const Conv2dShape& s) {
  return 4.0 * double(s.x_size() + s.w_size() + s.y_size() + size_t(s.K));
}

OpCase conv_forward(const std::string& name, const Conv2dShape& s, bool bias, bool perf) {
  OpParams p;
  p.conv = s;
  p.with_bias = bias;
  OpCase c = make_case(Op::conv2d_forward, name + " " + describe(s) + (bias ? "" : " no bias"), p,
                       kSum, s.forward_flops() + (bias ? double(s.y_size()) : 0.0), conv_bytes(s),
                       perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const Conv2dShape& s = p.conv;
    std::vector<TensorSpec> v = {in("x", uniform(r, s.x_size())), in("w", uniform(r, s.w_size())),
                                 out("y", s.y_size())};
    if (p.with_bias) v.push_back(in("b", uniform(r, size_t(s.K))));
    return v;
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.conv2d_forward(p.conv, t.f("x"), t.f("w"), p.with_bias ? t.f("b") : nullptr, t.f("y"));
  };
  return c;
}

void launch_conv_backward_data(Backend& be, const OpParams& p, const DeviceTensors& t) {
  be.conv2d_backward_data(p.conv, t.f("dy"), t.f("w"), t.f("dx"));
}

void launch_conv_backward_weights(Backend& be, const OpParams& p, const DeviceTensors& t) {
  be.conv2d_backward_weights(p.conv, t.f("x"), t.f("dy"), t.f("dw"),
                             p.with_bias ? t.f("db") : nullptr);
}

GradSpec conv_grad() {
  return gradient({Op::conv2d_backward_data, Op::conv2d_backward_weights}, "y", {"x", "w", "b"},
                  [](Backend& be, const OpParams& p, const DeviceTensors& t) {
                    launch_conv_backward_data(be, p, t);
                    launch_conv_backward_weights(be, p, t);
                  });
}

OpCase conv_backward_data(const std::string& name, const Conv2dShape& s, bool perf) {
  OpParams p;
  p.conv = s;
  OpCase c = make_case(Op::conv2d_backward_data, name + " " + describe(s), p, kSum,
                       s.forward_flops(), conv_bytes(s) - 4.0 * s.K, perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const Conv2dShape& s = p.conv;
    return std::vector<TensorSpec>{in("dy", uniform(r, s.y_size())),
                                   in("w", uniform(r, s.w_size())), out("dx", s.x_size())};
  };
  c.launch = launch_conv_backward_data;
  return c;
}

OpCase conv_backward_weights(const std::string& name, const Conv2dShape& s, bool bias, bool perf) {
  OpParams p;
  p.conv = s;
  p.with_bias = bias;
  OpCase c = make_case(Op::conv2d_backward_weights,
                       name + " " + describe(s) + (bias ? "" : " no db"), p, kSum,
                       s.forward_flops() + (bias ? double(s.y_size()) : 0.0), conv_bytes(s), perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const Conv2dShape& s = p.conv;
    std::vector<TensorSpec> v = {in("x", uniform(r, s.x_size())), in("dy", uniform(r, s.y_size())),
                                 out("dw", s.w_size())};
    if (p.with_bias) v.push_back(out("db", size_t(s.K)));
    return v;
  };
  c.launch = launch_conv_backward_weights;
  return c;
}

void add_conv(std::vector<OpCase>& t, int B) {
  for (const ConvShape& s : conv_test_shapes()) {
    for (bool bias : {true, false}) {
      t.push_back(conv_forward(s.name, s.s, bias, false));
      if (s.grad && bias) t.back().grad = conv_grad();
      t.push_back(conv_backward_weights(s.name, s.s, bias, false));
    }
    t.push_back(conv_backward_data(s.name, s.s, false));
  }
  const ConvShape odd = conv_test_shapes()[3];  // a copy: the list is a temporary
  t.push_back(unaligned(conv_forward(odd.name, odd.s, true, false), {"w", "b"}));
  t.push_back(unaligned(conv_backward_weights(odd.name, odd.s, true, false), {"dw", "db"}));
  for (const Layer& l : model_conv_layers(B)) {
    t.push_back(conv_forward(l.name, l.s, true, true));
    t.push_back(conv_backward_data(l.name, l.s, true));
    t.push_back(conv_backward_weights(l.name, l.s, true, true));
  }
}

// ---- pooling ---------------------------------------------------------------------------------

// Max compares, avg adds, once per window element.
double pool_flops(const Pool2dShape& s) { return double(s.y_size()) * s.window * s.window; }

void launch_pool_backward(Backend& be, const OpParams& p, const DeviceTensors& t) {
  be.pool2d_backward(p.pool_kind, p.pool, t.f("x"), t.f("dy"), t.f("dx"));
}

// The argmax bytes max pooling keeps: a valid place for every output, drawn at random inside its
// window's in-image part (pool_window), as core/pool_math.hpp's pool_argmax_byte counts it (row
// by row over the whole, unclipped window).
std::vector<float> random_argmax(Rng& rng, const Pool2dShape& s) {
  std::vector<float> v(s.y_size());
  const int P = s.P(), Q = s.Q();
  for (size_t i = 0; i < v.size(); ++i) {
    const int p = int(i / size_t(Q)) % P, q = int(i % size_t(Q));
    const PoolWindow b = pool_window(s, p, q);
    const int h = b.h0 + int(rng.next_u64() % uint64_t(b.h1 - b.h0));
    const int w = b.w0 + int(rng.next_u64() % uint64_t(b.w1 - b.w0));
    v[i] = float((h - (p * s.stride - s.pad)) * s.window + (w - (q * s.stride - s.pad)));
  }
  return v;
}

// Where pool2d_forward's argmax goes: written and compared for max; for avg an input the op must
// leave alone (the contract: never written by avg), so a stray write shows as a changed input.
TensorSpec argmax_tensor(const OpParams& p, Rng& r) {
  if (p.pool_kind == PoolKind::Max) return out("argmax", p.pool.y_size(), DType::U8);
  return in("argmax", integers(r, p.pool.y_size(), 256), DType::U8);
}

uint8_t* argmax_of(const OpParams& p, const DeviceTensors& t) {
  return p.with_argmax ? t.u8("argmax") : nullptr;
}

// pool2d_forward (x -> y, argmax) or pool2d_backward (x, dy -> dx); x distinct, so max has no
// ties and its argmax is one place on every backend.
OpCase pool_case(Op op, const std::string& name, PoolKind kind, const Pool2dShape& s, bool perf,
                 bool with_argmax = true) {
  OpParams p;
  p.pool = s;
  p.pool_kind = kind;
  p.with_argmax = with_argmax;
  const bool bwd = op == Op::pool2d_backward;
  const bool writes_argmax = !bwd && with_argmax && kind == PoolKind::Max;
  OpCase c = make_case(op,
                       std::string(pool_name(kind)) + " " + name + " " + describe(s) +
                           (bwd || with_argmax ? "" : " no argmax"),
                       p, kElementwise, pool_flops(s),
                       4.0 * double((bwd ? 2 : 1) * s.x_size() + s.y_size()) +
                           (writes_argmax ? double(s.y_size()) : 0.0),
                       perf);
  c.tensors = [bwd](const OpParams& p, Rng& r) {
    std::vector<TensorSpec> v = {in("x", distinct(r, p.pool.x_size()))};
    if (bwd) {
      v.push_back(in("dy", uniform(r, p.pool.y_size())));
      v.push_back(out("dx", p.pool.x_size()));
    } else {
      v.push_back(out("y", p.pool.y_size()));
      if (p.with_argmax) v.push_back(argmax_tensor(p, r));
    }
    return v;
  };
  if (bwd)
    c.launch = launch_pool_backward;
  else
    c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
      be.pool2d_forward(p.pool_kind, p.pool, t.f("x"), t.f("y"), argmax_of(p, t));
    };
  return c;
}

// Max pooling over values 0, 0.5 and 1 (flat regions through ReLU): exact ties, and the contract
// says which one wins (the first in row-major window order), in y, argmax and dx. Forward and
// backward in one case.
OpCase pool_ties(const std::string& name, const Pool2dShape& s) {
  OpParams p;
  p.pool = s;
  OpCase c = make_case(Op::pool2d_backward, "maxpool ties " + name + " " + describe(s), p, kExact,
                       2 * pool_flops(s),
                       4.0 * double(2 * s.x_size() + 2 * s.y_size()) + double(s.y_size()), false);
  c.tensors = [](const OpParams& p, Rng& r) {
    std::vector<float> x = integers(r, p.pool.x_size(), 3);
    for (auto& v : x) v *= 0.5f;
    return std::vector<TensorSpec>{
        in("x", x), out("y", p.pool.y_size()), out("argmax", p.pool.y_size(), DType::U8),
        in("dy", uniform(r, p.pool.y_size())), out("dx", p.pool.x_size())};
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.pool2d_forward(PoolKind::Max, p.pool, t.f("x"), t.f("y"), t.u8("argmax"));
    be.pool2d_backward(PoolKind::Max, p.pool, t.f("x"), t.f("dy"), t.f("dx"));
  };
  return c;
}

void launch_max_pool_backward_argmax(Backend& be, const OpParams& p, const DeviceTensors& t) {
  be.max_pool_backward_argmax(p.pool, p.act, t.u8("argmax"), t.f("y"), t.f("dy"), t.f("dx"));
}

// max_pool_backward_argmax (argmax, y, dy -> dx): valid indices at random places, y as an
// activation leaves it. A pixel gathers one term per window naming it: without overlap at most
// one (one formula per element), with overlapping windows a short sum in any order.
OpCase pool_argmax_backward(const std::string& name, Activation act, const Pool2dShape& s,
                            bool perf) {
  OpParams p;
  p.pool = s;
  p.act = act;
  const bool overlap = s.stride < s.window;
  // reads argmax (bytes), y and dy; writes dx
  OpCase c = make_case(Op::max_pool_backward_argmax,
                       name + " " + describe(s) + " +" + activation_name(act), p,
                       overlap ? kSum : kElementwise, 3.0 * double(s.y_size()),
                       double(s.y_size()) * 9.0 + 4.0 * double(s.x_size()), perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    return std::vector<TensorSpec>{in("argmax", random_argmax(r, p.pool), DType::U8),
                                   in("y", activated(r, p.act, p.pool.y_size())),
                                   in("dy", uniform(r, p.pool.y_size())),
                                   out("dx", p.pool.x_size())};
  };
  c.launch = launch_max_pool_backward_argmax;
  return c;
}

// The gradient of max pooling through its kept indices: pool2d_forward writes y and argmax, and
// max_pool_backward_argmax without an activation must give dL/dx.
// Every coordinate of x: only a window's maximum gets a gradient, few pixels under wide windows,
// which a sample of 12 may all miss.
GradSpec argmax_grad() {
  GradSpec g = gradient({Op::max_pool_backward_argmax}, "y", {"x"},
                        [](Backend& be, const OpParams& p, const DeviceTensors& t) {
                          be.max_pool_backward_argmax(p.pool, Activation::None, t.u8("argmax"),
                                                      t.f("y"), t.f("dy"), t.f("dx"));
                        });
  g.coords = 1000;  // the grad shapes have at most 760 elements
  return g;
}

using PoolShape = NamedShape<Pool2dShape>;

std::vector<PoolShape> pool_test_shapes() {
  return {
      {"lenet5 pool1", pool_shape(5, 6, 28, 28, 2, 2), false},
      {"lenet5 pool2", pool_shape(3, 16, 10, 10, 2, 2), false},
      {"overlapping non-square", pool_shape(2, 3, 7, 9, 3, 2), true},
      {"stride1", pool_shape(1, 1, 5, 6, 2, 1), false},
      {"ragged", pool_shape(2, 2, 10, 11, 3, 3), false},
      {"small", pool_shape(2, 2, 6, 7, 2, 2), true},
      // Padding: clipped windows at every edge, tiling and overlapping, pad up to window - 1.
      {"padded overlapping", pool_shape(2, 3, 7, 9, 3, 2, 1), true},
      {"padded tiling", pool_shape(2, 2, 6, 7, 2, 2, 1), true},
      {"padded stride1 pad2", pool_shape(1, 2, 5, 6, 3, 1, 2), true},
      {"padded ragged", pool_shape(2, 2, 10, 11, 3, 3, 1), false},
      {"padded 1-pixel plane", pool_shape(3, 2, 1, 1, 2, 1, 1), false},
      // The widest window whose argmax fits a byte (kMaxArgmaxWindow), clipped by padding.
      {"widest window", pool_shape(1, 2, 20, 19, kMaxArgmaxWindow, 3, 7), true},
  };
}

// The pooled outputs of the models' layers at batch B: what the perf cases time.
std::vector<std::pair<std::string, Pool2dShape>> model_pool_shapes(int B) {
  std::vector<std::pair<std::string, Pool2dShape>> v;
  for (const Layer& l : model_conv_layers(B))
    if (l.epi.pool != PoolKind::None) v.push_back({l.name + " output", pooled_shape(l.s, l.epi)});
  return v;
}

// A 3x3 stride-2 pad-1 pool (ResNet's stem) of LeNet-5's first conv output.
Pool2dShape stem_pool(int B) { return pool_shape(B, 6, 28, 28, 3, 2, 1); }

// max_pool_backward_argmax over every pool shape and activation; its finite differences on the
// small shapes through pool2d_forward's argmax; the models' pooled outputs timed (after ReLU).
void add_pool_argmax(std::vector<OpCase>& t, int B) {
  for (const PoolShape& s : pool_test_shapes()) {
    for (Activation act : all_activations())
      t.push_back(pool_argmax_backward(s.name, act, s.s, false));
    if (!s.grad) continue;
    t.push_back(pool_case(Op::pool2d_forward, std::string(s.name) + " argmax gradient",
                          PoolKind::Max, s.s, false));
    t.back().grad = argmax_grad();
  }
  for (const auto& [name, s] : model_pool_shapes(B))
    t.push_back(pool_argmax_backward(name, Activation::ReLU, s, true));
  t.push_back(pool_argmax_backward("lenet5 conv1 output", Activation::ReLU, stem_pool(B), true));
}

void add_pool(std::vector<OpCase>& t, int B) {
  for (PoolKind kind : all_pool_kinds()) {
    if (kind == PoolKind::None) continue;
    for (const PoolShape& s : pool_test_shapes()) {
      t.push_back(pool_case(Op::pool2d_forward, s.name, kind, s.s, false));
      if (s.grad) t.back().grad = gradient({Op::pool2d_backward}, "y", {"x"}, launch_pool_backward);
      t.push_back(pool_case(Op::pool2d_backward, s.name, kind, s.s, false));
    }
    for (const auto& [name, s] : model_pool_shapes(B))
      for (Op op : {Op::pool2d_forward, Op::pool2d_backward})
        t.push_back(pool_case(op, name, kind, s, true));
    for (Op op : {Op::pool2d_forward, Op::pool2d_backward})
      t.push_back(pool_case(op, "lenet5 conv1 output", kind, stem_pool(B), true));
  }
  // As a pooling layer of its own calls it: no indices asked for (tiling, overlapping, padded).
  for (int i : {0, 2, 6}) {
    const PoolShape s = pool_test_shapes()[size_t(i)];
    t.push_back(pool_case(Op::pool2d_forward, s.name, PoolKind::Max, s.s, false, false));
  }
  for (const PoolShape& s : pool_test_shapes()) t.push_back(pool_ties(s.name, s.s));
  add_pool_argmax(t, B);
}

// ---- bias ------------------------------------------------------------------------------------

void launch_bias_backward(Backend& be, const OpParams& p, const DeviceTensors& t) {
  be.bias_backward(p.N, p.C, p.HW, t.f("dy"), t.f("db"));
}

OpCase bias_add(int N, int C, int HW, bool perf) {
  OpParams p;
  p.N = N; p.C = C; p.HW = HW;
  const double n = double(N) * C * HW;
  OpCase c = make_case(Op::bias_add, "N" + std::to_string(N) + " C" + std::to_string(C) + " HW" +
                                         std::to_string(HW),
                       p, kElementwise, n, 4.0 * (2 * n + C), perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    return std::vector<TensorSpec>{in("b", uniform(r, size_t(p.C))),
                                   inout("y", uniform(r, size_t(p.N) * p.C * p.HW))};
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.bias_add(p.N, p.C, p.HW, t.f("b"), t.f("y"));
  };
  if (n <= 64)  // small enough for finite differences
    c.grad = gradient({Op::bias_backward}, "y", {"b"}, launch_bias_backward);
  return c;
}

OpCase bias_backward(int N, int C, int HW, bool perf) {
  OpParams p;
  p.N = N; p.C = C; p.HW = HW;
  const double n = double(N) * C * HW;
  OpCase c = make_case(Op::bias_backward, "N" + std::to_string(N) + " C" + std::to_string(C) +
                                              " HW" + std::to_string(HW),
                       p, kSum, n, 4.0 * (n + C), perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    return std::vector<TensorSpec>{in("dy", uniform(r, size_t(p.N) * p.C * p.HW)),
                                   out("db", size_t(p.C))};
  };
  c.launch = launch_bias_backward;
  return c;
}

void add_bias(std::vector<OpCase>& t, int B) {
  struct Shape { int N, C, HW; bool perf; };
  const Shape shapes[] = {{5, 6, 784, false}, {1, 3, 1, false}, {64, 120, 1, false},
                          {3, 7, 13, false},  {2, 3, 5, false},  {B, 6, 784, true}};
  for (const Shape& s : shapes) {
    t.push_back(bias_add(s.N, s.C, s.HW, s.perf));
    t.push_back(bias_backward(s.N, s.C, s.HW, s.perf));
  }
  t.push_back(unaligned(bias_add(3, 7, 13, false), {"b"}));
  t.push_back(unaligned(bias_backward(3, 7, 13, false), {"db"}));
}

// ---- batch normalisation ---------------------------------------------------------------------

std::string describe_bn(const OpParams& p) {
  return "N" + std::to_string(p.N) + " C" + std::to_string(p.C) + " HW" + std::to_string(p.HW) +
         (p.act == Activation::None ? "" : std::string(" +") + activation_name(p.act));
}

// y is read only with a fused activation (None passes nullptr, as a caller may).
void launch_batchnorm_backward(Backend& be, const OpParams& p, const DeviceTensors& t) {
  be.batchnorm_backward(p.N, p.C, p.HW, p.act, t.f("x"),
                        p.act == Activation::None ? nullptr : t.f("y"), t.f("dy"), t.f("gamma"),
                        t.f("save_mean"), t.f("save_inv_std"), p.want_dx ? t.f("dx") : nullptr,
                        t.f("dgamma"), t.f("dbeta"));
}

// Per-channel parameters as a trained layer has them: gamma around 1, beta around 0.
std::vector<TensorSpec> batchnorm_params(const OpParams& p, Rng& r) {
  return {in("gamma", uniform(r, size_t(p.C), 0.5f, 1.5f)), in("beta", uniform(r, size_t(p.C)))};
}

// x off zero mean and unit spread (as a convolution's output is), so a kernel that forgot to
// subtract the mean or to divide by the deviation is far off. Channel sums: kSum.
OpCase batchnorm_train(int N, int C, int HW, bool perf, Activation act = Activation::None) {
  OpParams p;
  p.N = N; p.C = C; p.HW = HW; p.momentum = 0.25f; p.act = act;
  const double n = double(N) * C * HW;
  OpCase c = make_case(Op::batchnorm_forward_train, describe_bn(p), p, kSum, 8 * n,
                       4.0 * (2 * n + 8 * C), perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const size_t n = size_t(p.N) * p.C * p.HW;
    std::vector<TensorSpec> v = {in("x", uniform(r, n, -0.5f, 2.5f))};
    for (auto& t : batchnorm_params(p, r)) v.push_back(t);
    v.push_back(out("y", n));
    v.push_back(out("save_mean", size_t(p.C)));
    v.push_back(out("save_inv_std", size_t(p.C)));
    v.push_back(inout("running_mean", uniform(r, size_t(p.C))));
    v.push_back(inout("running_var", uniform(r, size_t(p.C), 0.5f, 2.f)));
    return v;
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.batchnorm_forward_train(p.N, p.C, p.HW, p.act, p.eps, p.momentum, t.f("x"), t.f("gamma"),
                               t.f("beta"), t.f("y"), t.f("save_mean"), t.f("save_inv_std"),
                               t.f("running_mean"), t.f("running_var"));
  };
  // Finite differences through the batch statistics (x moves mean and variance) and the fused
  // activation; a normalised value that lands within a step of ReLU's kink is skipped as such.
  if (n <= 64) {
    c.grad = gradient({Op::batchnorm_backward}, "y", {"x", "gamma", "beta"},
                      launch_batchnorm_backward);
  }
  return c;
}

OpCase batchnorm_infer(int N, int C, int HW, bool perf, Activation act = Activation::None) {
  OpParams p;
  p.N = N; p.C = C; p.HW = HW; p.eps = 1e-3f; p.act = act;
  const double n = double(N) * C * HW;
  OpCase c = make_case(Op::batchnorm_forward_infer, describe_bn(p) + " eps1e-3", p, kElementwise,
                       4 * n, 4.0 * (2 * n + 4 * C), perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const size_t n = size_t(p.N) * p.C * p.HW;
    std::vector<TensorSpec> v = {in("x", uniform(r, n, -0.5f, 2.5f))};
    for (auto& t : batchnorm_params(p, r)) v.push_back(t);
    v.push_back(in("running_mean", uniform(r, size_t(p.C))));
    v.push_back(in("running_var", uniform(r, size_t(p.C), 0.5f, 2.f)));
    v.push_back(out("y", n));
    return v;
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.batchnorm_forward_infer(p.N, p.C, p.HW, p.act, p.eps, t.f("x"), t.f("gamma"), t.f("beta"),
                               t.f("running_mean"), t.f("running_var"), t.f("y"));
  };
  return c;
}

// save_mean and save_inv_std as a training forward leaves them for this x: the backward's
// sums of dy * xhat then behave as they do in training (xhat centred, unit spread).
OpCase batchnorm_backward_case(int N, int C, int HW, bool want_dx, bool perf,
                               Activation act = Activation::None) {
  OpParams p;
  p.N = N; p.C = C; p.HW = HW; p.want_dx = want_dx; p.act = act;
  const double n = double(N) * C * HW;
  OpCase c = make_case(Op::batchnorm_backward, describe_bn(p) + (want_dx ? "" : " no dx"), p,
                       kSum, 10 * n, 4.0 * ((want_dx ? 3 : 2) * n + 5 * C), perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const size_t n = size_t(p.N) * p.C * p.HW;
    const std::vector<float> x = uniform(r, n, -0.5f, 2.5f);
    std::vector<float> mean(size_t(p.C), 0.f), inv_std(size_t(p.C), 0.f);
    for (int c = 0; c < p.C; ++c) {
      double s = 0, s2 = 0;
      for (int k = 0; k < p.N; ++k)
        for (int i = 0; i < p.HW; ++i) {
          const double v = x[(size_t(k) * p.C + c) * p.HW + i];
          s += v;
          s2 += v * v;
        }
      const double M = double(p.N) * p.HW, m = s / M;
      mean[size_t(c)] = float(m);
      inv_std[size_t(c)] = float(1.0 / std::sqrt(std::max(0.0, s2 / M - m * m) + 1e-5));
    }
    // y: an activation's outputs (where its derivative is read), unread for None.
    std::vector<TensorSpec> v = {in("x", x), in("y", activated(r, p.act, n)), in("dy", uniform(r, n)),
                                 in("gamma", uniform(r, size_t(p.C), 0.5f, 1.5f)),
                                 in("save_mean", mean), in("save_inv_std", inv_std)};
    if (p.want_dx) v.push_back(out("dx", n));
    v.push_back(out("dgamma", size_t(p.C)));
    v.push_back(out("dbeta", size_t(p.C)));
    return v;
  };
  c.launch = launch_batchnorm_backward;
  return c;
}

void add_batchnorm(std::vector<OpCase>& t, int B) {
  struct Shape { int N, C, HW; bool perf; };
  // conv outputs (LeNet-5's conv1 and conv2 maps), odd planes, dense rows (HW 1), one value per
  // channel (M = 1: zero variance), and the perf shapes at the batch.
  const Shape shapes[] = {{5, 6, 784, false}, {3, 16, 100, false}, {3, 7, 13, false},
                          {2, 3, 5, false},   {4, 3, 1, false},    {64, 120, 1, false},
                          {1, 4, 1, false},   {B, 6, 784, true},   {B, 120, 1, true}};
  for (const Shape& s : shapes) {
    t.push_back(batchnorm_train(s.N, s.C, s.HW, s.perf));
    t.push_back(batchnorm_infer(s.N, s.C, s.HW, s.perf));
    t.push_back(batchnorm_backward_case(s.N, s.C, s.HW, true, s.perf));
  }
  t.push_back(batchnorm_backward_case(3, 7, 13, false, false));
  t.push_back(unaligned(batchnorm_train(3, 7, 13, false), {"gamma", "beta", "running_mean"}));
  t.push_back(
      unaligned(batchnorm_backward_case(3, 7, 13, true, false), {"gamma", "dgamma", "dbeta"}));
  // Every fused activation: a conv output's shape, dense rows, and a small one for the gradient.
  for (Activation act : all_activations()) {
    if (act == Activation::None) continue;
    for (const Shape& s :
         {Shape{3, 16, 100, false}, Shape{64, 120, 1, false}, Shape{2, 3, 5, false}}) {
      t.push_back(batchnorm_train(s.N, s.C, s.HW, s.perf, act));
      t.push_back(batchnorm_infer(s.N, s.C, s.HW, s.perf, act));
      t.push_back(batchnorm_backward_case(s.N, s.C, s.HW, true, s.perf, act));
    }
    t.push_back(batchnorm_backward_case(3, 7, 13, false, false, act));
  }
  t.push_back(batchnorm_train(B, 6, 784, true, Activation::ReLU));  // the H200's measured case
  t.push_back(batchnorm_backward_case(B, 6, 784, true, true, Activation::ReLU));
}

// The tensors of an element-wise op: x read and y written, or (in place) x read and overwritten.
void push_elementwise(std::vector<TensorSpec>& v, bool in_place, const std::string& x,
                      const std::string& y, std::vector<float> values) {
  if (in_place) {
    v.push_back(inout(x, std::move(values)));
    return;
  }
  const size_t n = values.size();
  v.push_back(in(x, std::move(values)));
  v.push_back(out(y, n));
}

// ---- activations: every row of the vocabulary's table -------------------------------------------

void launch_activation_backward(Backend& be, const OpParams& p, const DeviceTensors& t) {
  float* dy = t.f("dy");
  be.activation_backward(p.act, p.n, t.f("y"), dy, p.in_place ? dy : t.f("dx"));
}

// activation_forward (x -> y; x off the kink at 0) or activation_backward (y = act(random), dy
// -> dx), in place (x == y, dy == dx) or not.
OpCase activation_case(Op op, Activation act, size_t n, bool in_place, bool perf) {
  OpParams p;
  p.act = act; p.n = n; p.in_place = in_place;
  const bool bwd = op == Op::activation_backward;
  OpCase c = make_case(op, std::string(activation_name(act)) + " n" + std::to_string(n) +
                               (in_place ? " in place" : ""),
                       p, kElementwise, (bwd ? 2.0 : 1.0) * n, (bwd ? 12.0 : 8.0) * n, perf);
  c.tensors = [bwd](const OpParams& p, Rng& r) {
    std::vector<TensorSpec> v;
    if (bwd) v.push_back(in("y", activated(r, p.act, p.n)));
    const std::string x = bwd ? "dy" : "x", y = bwd ? "dx" : "y";
    push_elementwise(v, p.in_place, x, y, bwd ? uniform(r, p.n) : off_kink(r, p.n));
    return v;
  };
  if (bwd)
    c.launch = launch_activation_backward;
  else
    c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
      float* x = t.f("x");
      be.activation_forward(p.act, p.n, x, p.in_place ? x : t.f("y"));
    };
  return c;
}

void add_activation(std::vector<OpCase>& t, int B) {
  for (Activation act : all_activations()) {
    for (bool in_place : {false, true}) {
      t.push_back(activation_case(Op::activation_forward, act, 1237, in_place, false));
      if (!in_place)
        t.back().grad =
            gradient({Op::activation_backward}, "y", {"x"}, launch_activation_backward);
      t.push_back(activation_case(Op::activation_backward, act, 1237, in_place, false));
    }
    const size_t n = size_t(B) * 6 * 28 * 28;  // LeNet-5's first activation
    for (Op op : {Op::activation_forward, Op::activation_backward})
      t.push_back(activation_case(op, act, n, true, true));
  }
}

// ---- dropout and global average pooling ------------------------------------------------------

void launch_dropout_backward(Backend& be, const OpParams& p, const DeviceTensors& t) {
  const DropoutArgs& d = p.dropout;
  float* dy = t.f("dy");
  be.dropout_backward(p.n, d.rate, d.seed, d.salt, t.i32("step"), dy, p.in_place ? dy : t.f("dx"));
}

// dropout_forward (x -> y) or dropout_backward (dy -> dx) of n elements at step d.step. The mask
// is an integer hash (core/dropout_math.hpp) and a kept element is one float multiply: bit-exact.
OpCase dropout_case(Op op, size_t n, const DropoutArgs& d, bool in_place, bool perf) {
  OpParams p;
  p.n = n; p.dropout = d; p.in_place = in_place;
  const bool bwd = op == Op::dropout_backward;
  std::ostringstream name;
  name << "n" << n << " rate" << d.rate << " seed" << d.seed << " salt" << d.salt << " step"
       << d.step << (in_place ? " in place" : "");
  OpCase c = make_case(op, name.str(), p, kExact, double(n), 8.0 * n, perf);
  c.tensors = [bwd](const OpParams& p, Rng& r) {
    const std::string x = bwd ? "dy" : "x", y = bwd ? "dx" : "y";
    std::vector<TensorSpec> v = {in("step", {float(p.dropout.step)}, DType::I32)};
    push_elementwise(v, p.in_place, x, y, uniform(r, p.n));
    return v;
  };
  if (bwd)
    c.launch = launch_dropout_backward;
  else
    c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
      const DropoutArgs& d = p.dropout;
      float* x = t.f("x");
      be.dropout_forward(p.n, d.rate, d.seed, d.salt, t.i32("step"), x, p.in_place ? x : t.f("y"));
    };
  return c;
}

DropoutArgs dropout_args(float rate, uint32_t seed, uint32_t salt, int32_t step) {
  DropoutArgs d;
  d.rate = rate; d.seed = seed; d.salt = salt; d.step = step;
  return d;
}

void add_dropout(std::vector<OpCase>& t, int B) {
  // Rates 0 (keeps all), 0.5, 0.1 and 0.9; other seeds, salts and steps (a large step too);
  // n odd, so no vector width divides it.
  const DropoutArgs args[] = {dropout_args(0.5f, 3, 0, 0), dropout_args(0.1f, 3, 1, 7),
                              dropout_args(0.9f, 12345, 2, 1233), dropout_args(0.f, 3, 0, 5),
                              dropout_args(0.5f, 4000000000u, 7, 2147483647)};
  for (const DropoutArgs& d : args)
    for (bool in_place : {false, true}) {
      t.push_back(dropout_case(Op::dropout_forward, 1237, d, in_place, false));
      if (!in_place) t.back().grad = gradient({Op::dropout_backward}, "y", {"x"}, launch_dropout_backward);
      t.push_back(dropout_case(Op::dropout_backward, 1237, d, in_place, false));
    }
  t.push_back(unaligned(dropout_case(Op::dropout_forward, 1237, args[1], false, false), {"x", "y"}));
  // The dense layers' outputs a model would drop (LeNet-5 fc1, at the perf batch), and a
  // convolution's output (LeNet-5's first activation).
  for (size_t n : {size_t(B) * 120, size_t(B) * 6 * 28 * 28})
    for (Op op : {Op::dropout_forward, Op::dropout_backward})
      t.push_back(dropout_case(op, n, dropout_args(0.5f, 1, 0, 3), true, true));
}

void launch_global_avg_pool_backward(Backend& be, const OpParams& p, const DeviceTensors& t) {
  be.global_avg_pool_backward(p.N, p.C, p.HW, t.f("dy"), t.f("dx"));
}

// global_avg_pool_forward (x (N,C,HW) -> y (N,C): sums, another order on a GPU) or
// global_avg_pool_backward (dy -> dx: one product per element).
OpCase global_pool_case(Op op, int N, int C, int HW, bool perf) {
  OpParams p;
  p.N = N; p.C = C; p.HW = HW;
  const bool bwd = op == Op::global_avg_pool_backward;
  const double n = double(N) * C * HW;
  OpCase c = make_case(op, "N" + std::to_string(N) + " C" + std::to_string(C) + " HW" +
                               std::to_string(HW),
                       p, bwd ? kElementwise : kSum, n, 4.0 * (n + double(N) * C), perf);
  c.tensors = [bwd](const OpParams& p, Rng& r) {
    const size_t planes = size_t(p.N) * p.C, n = planes * p.HW;
    if (bwd) return std::vector<TensorSpec>{in("dy", uniform(r, planes)), out("dx", n)};
    return std::vector<TensorSpec>{in("x", uniform(r, n)), out("y", planes)};
  };
  if (bwd)
    c.launch = launch_global_avg_pool_backward;
  else
    c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
      be.global_avg_pool_forward(p.N, p.C, p.HW, t.f("x"), t.f("y"));
    };
  if (!bwd && n <= 400)  // small enough for finite differences
    c.grad = gradient({Op::global_avg_pool_backward}, "y", {"x"}, launch_global_avg_pool_backward);
  return c;
}

void add_global_pool(std::vector<OpCase>& t, int B) {
  // HW 1 (a 1x1 map), 25, 49, 13 (odd), 33 (a warp and one more), 1000 (many per lane).
  struct Shape { int N, C, HW; };
  const Shape shapes[] = {{1, 1, 1}, {2, 3, 25}, {5, 16, 49}, {3, 7, 13}, {2, 5, 33}, {2, 4, 1000}};
  for (const Shape& s : shapes)
    for (Op op : {Op::global_avg_pool_forward, Op::global_avg_pool_backward})
      t.push_back(global_pool_case(op, s.N, s.C, s.HW, false));
  t.push_back(unaligned(global_pool_case(Op::global_avg_pool_forward, 3, 7, 13, false), {"x", "y"}));
  // LeNet-5's second conv output (16 maps of 10x10) at the perf batch.
  for (Op op : {Op::global_avg_pool_forward, Op::global_avg_pool_backward})
    t.push_back(global_pool_case(op, B, 16, 100, true));
}

// ---- loss --------------------------------------------------------------------------------------

OpCase softmax_case(int N, int K, bool with_gradient, bool perf) {
  OpParams p;
  p.N = N; p.C = K; p.want_dx = with_gradient;
  OpCase c = make_case(Op::softmax_cross_entropy,
                       "N" + std::to_string(N) + " K" + std::to_string(K) +
                           (with_gradient ? "" : " metrics only"),
                       p, kSum, 5.0 * N * K, 4.0 * (2.0 * N * K + N), perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    // metrics start non-zero: the op accumulates into them
    std::vector<TensorSpec> v = {in("logits", uniform(r, size_t(p.N) * p.C, -4.f, 4.f)),
                                 in("labels", integers(r, size_t(p.N), p.C), DType::I32),
                                 inout("metrics", {1.5f, 2.f})};
    if (p.want_dx) v.push_back(out("dlogits", size_t(p.N) * p.C));
    return v;
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.softmax_cross_entropy(p.N, p.C, t.f("logits"), t.i32("labels"),
                             p.want_dx ? t.f("dlogits") : nullptr, t.f("metrics"));
  };
  return c;
}

void add_softmax(std::vector<OpCase>& t, int B) {
  for (auto [N, K] : {std::pair{64, 10}, {1, 10}, {7, 3}, {1000, 10}})
    for (bool with_gradient : {true, false}) t.push_back(softmax_case(N, K, with_gradient, false));
  t.push_back(softmax_case(B, 10, true, true));
  // The gradient of the mean loss: L = metrics[loss sum] / N, so dL/dlogits is dlogits.
  OpCase c = softmax_case(4, 10, false, false);
  c.name += " (mean loss)";
  c.tensors = [](const OpParams& p, Rng& r) {
    return std::vector<TensorSpec>{in("logits", uniform(r, size_t(p.N) * p.C, -2.f, 2.f)),
                                   in("labels", {3, 0, 9, 3}, DType::I32),
                                   inout("metrics", {0.f, 0.f})};
  };
  GradSpec g = gradient(
      {Op::softmax_cross_entropy}, "metrics", {"logits"},
      [](Backend& be, const OpParams& p, const DeviceTensors& t) {
        be.softmax_cross_entropy(p.N, p.C, t.f("logits"), t.i32("labels"), t.f("dlogits"),
                                 t.f("metrics2"));
      },
      {scratch("metrics2", 2)});
  g.r = {1.f / 4, 0.f};
  g.abs = 5e-4;  // the loss sum of 4 rows in float: ~1e-5 noise in the estimate; dlogits ~0.1
  g.why = "float loss sum: ~1e-5 noise at eps 1e-2; dlogits are ~0.1, a wrong one is off by that";
  c.grad = g;
  t.push_back(c);
}

// The loss on 16-bit logits: the logits stored in the precision, the gradient rounded to it
// (times the loss scale when one is given), the widened logits; the precision's tolerance.
OpCase softmax_16_case(Precision prec, int N, int K, bool with_gradient, float scale, bool perf) {
  OpParams p;
  p.N = N; p.C = K; p.want_dx = with_gradient; p.precision = prec; p.loss_scale = scale;
  std::string name = std::string(precision_name(prec)) + " N" + std::to_string(N) + " K" +
                     std::to_string(K) + (with_gradient ? "" : " metrics only");
  if (scale != 1.f) name += " scale " + std::to_string(int(scale));
  OpCase c = make_case(Op::softmax_cross_entropy_16, name, p,
                       prec == Precision::BF16 ? kStorageBf16 : kStorageFp16, 5.0 * N * K,
                       2.0 * (3.0 * N * K + 2.0 * N), perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const DType t16 = p.precision == Precision::BF16 ? DType::BF16 : DType::F16;
    const size_t n = size_t(p.N) * p.C;
    std::vector<TensorSpec> v = {in("logits", uniform(r, n, -4.f, 4.f), t16),
                                 in("labels", integers(r, size_t(p.N), p.C), DType::I32),
                                 inout("metrics", {1.5f, 2.f}), out("logits32", n),
                                 scratch("staging", 2 * n)};
    if (p.want_dx) v.push_back(out("dlogits", n, t16));
    if (p.loss_scale != 1.f) v.push_back(in("scale", {p.loss_scale}));
    return v;
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.softmax_cross_entropy_16(p.precision, p.N, p.C, t.u16("logits"), t.i32("labels"),
                                p.loss_scale != 1.f ? t.f("scale") : nullptr, t.f("staging"),
                                t.f("logits32"), p.want_dx ? t.u16("dlogits") : nullptr,
                                t.f("metrics"));
  };
  return c;
}

void add_softmax_16(std::vector<OpCase>& t, int B) {
  for (Precision prec : {Precision::BF16, Precision::F16}) {
    for (auto [N, K] : {std::pair{64, 10}, {1, 10}, {7, 3}, {1000, 10}})
      for (bool with_gradient : {true, false})
        t.push_back(softmax_16_case(prec, N, K, with_gradient, 1.f, false));
    t.push_back(softmax_16_case(prec, 300, 10, true, 1024.f, false));  // several blocks, scaled
    t.push_back(softmax_16_case(prec, B, 10, true, 1.f, true));
  }
}

// ---- data pipeline -----------------------------------------------------------------------------

DeviceDataset dataset(const OpParams& p, const DeviceTensors& t) {
  const GatherArgs& g = p.gather;
  DeviceDataset d;
  d.images = t.u8("images");
  d.labels = t.i32("labels");
  d.count = g.count;
  d.height = g.height;
  d.width = g.width;
  d.channels = g.channels;
  for (int c = 0; c < g.channels; ++c) {  // a different normalisation per channel
    d.mean[c] = g.mean + 0.1f * c;
    d.inv_std[c] = g.inv_std + 0.5f * c;
  }
  return d;
}

std::vector<TensorSpec> gather_tensors(const OpParams& p, Rng& r) {
  const GatherArgs& g = p.gather;
  const size_t batch = size_t(g.layout.batch) * g.steps;
  return {in("images", integers(r, size_t(g.count) * g.channels * g.height * g.width, 256),
             DType::U8),
          in("labels", integers(r, size_t(g.count), 10), DType::I32),
          out("x", batch * g.channels * g.layout.out_h * g.layout.out_w), out("y", batch, DType::I32),
          inout("step", {0.f}, DType::I32)};
}

OpCase gather_case(Op op, const std::string& name, const GatherArgs& g, bool perf) {
  OpParams p;
  p.gather = g;
  const double batch = double(g.layout.batch) * g.steps;
  const double outs = batch * g.channels * g.layout.out_h * g.layout.out_w;
  OpCase c = make_case(op, name + " batch " + std::to_string(g.layout.batch) + " " +
                               std::to_string(g.channels) + "x" +
                               std::to_string(g.height) + "x" + std::to_string(g.width) + " -> " +
                               std::to_string(g.layout.out_h) + "x" +
                               std::to_string(g.layout.out_w),
                       p, kExact, 2.0 * outs,
                       batch * g.channels * g.height * g.width + 4.0 * outs + 8.0 * batch, perf);
  c.tensors = gather_tensors;
  if (op == Op::gather_train_batch) {
    c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
      const GatherArgs& g = p.gather;
      const size_t x_stride = size_t(g.layout.batch) * g.channels * g.layout.out_h * g.layout.out_w;
      for (int s = 0; s < g.steps; ++s) {
        be.gather_train_batch(dataset(p, t), t.i32("step"), g.steps_per_epoch, g.seed, g.layout,
                              t.f("x") + s * x_stride, t.i32("y") + s * g.layout.batch);
        be.increment(t.i32("step"));
      }
    };
  } else {
    c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
      be.gather_batch(dataset(p, t), p.gather.first, p.gather.layout, t.f("x"), t.i32("y"));
    };
  }
  return c;
}

void add_gather(std::vector<OpCase>& t, int B) {
  // 203 images of 5x4 in batches of 16, padded to 6x5: 12 steps per epoch, 15 steps cross into
  // the second epoch (a new shuffle).
  GatherArgs g;
  g.count = 203; g.height = 5; g.width = 4; g.mean = 0.3f; g.inv_std = 2.5f;
  g.layout = {16, 6, 5};
  g.steps = 15; g.steps_per_epoch = 12; g.seed = 9;
  t.push_back(gather_case(Op::gather_train_batch, "two epochs", g, false));
  g.layout = {11, 6, 5};
  g.steps = 1; g.first = 190;  // the last 11 images, in order
  t.push_back(gather_case(Op::gather_batch, "tail", g, false));
  // MNIST-sized images into LeNet-5's 28x28 and Simard's 29x29 inputs.
  GatherArgs m;
  m.count = 1024; m.height = 28; m.width = 28; m.mean = 0.13f; m.inv_std = 3.2f;
  m.steps_per_epoch = m.count / B; m.seed = 3;
  for (int side : {28, 29}) {
    m.layout = {B, side, side};
    t.push_back(gather_case(Op::gather_train_batch, "mnist", m, true));
    t.push_back(gather_case(Op::gather_batch, "mnist", m, true));
  }
  // Three channels, each normalised its own way: the odd shapes above, then CIFAR-sized images
  // (3x32x32) into a 3x33x34 input.
  g.channels = 3;
  g.layout = {16, 6, 5};
  g.steps = 15; g.first = 0;
  t.push_back(gather_case(Op::gather_train_batch, "rgb two epochs", g, false));
  g.layout = {11, 6, 5};
  g.steps = 1; g.first = 190;
  t.push_back(gather_case(Op::gather_batch, "rgb tail", g, false));
  // The same images as they are (no border): the cuda gather's word path, its channel changing
  // between words; then 5x5 planes, whose words would straddle rows of two channels.
  g.layout = {16, 5, 4};
  g.steps = 15; g.first = 0;
  t.push_back(gather_case(Op::gather_train_batch, "rgb unpadded two epochs", g, false));
  g.height = 5; g.width = 5; g.layout = {16, 5, 5};
  t.push_back(gather_case(Op::gather_train_batch, "rgb odd planes", g, false));
  GatherArgs c;
  c.channels = 3; c.count = 500; c.height = 32; c.width = 32; c.mean = 0.47f; c.inv_std = 4.f;
  c.steps_per_epoch = c.count / B; c.seed = 5;
  c.layout = {B, 33, 34};
  t.push_back(gather_case(Op::gather_train_batch, "cifar", c, true));
  t.push_back(gather_case(Op::gather_batch, "cifar", c, true));
  c.layout = {B, 32, 32};
  t.push_back(gather_case(Op::gather_train_batch, "cifar unpadded", c, false));
  t.push_back(gather_case(Op::gather_batch, "cifar unpadded", c, false));
}

// ---- data augmentation -------------------------------------------------------------------------

OpCase augment_case(const std::string& name, const AugmentArgs& a, Tolerance tol, bool perf) {
  OpParams p;
  p.augment = a;
  const double pixels = double(a.n) * a.c * a.h * a.w * a.steps;
  const double field = a.cfg.elastic ? double(a.n) * a.h * a.w * a.steps : 0.0;
  // Per output value a bilinear sample (~8); the elastic field 2 smoothings of 2r+1 taps each
  // for x and y per pixel.
  const double taps = a.cfg.elastic ? 2.0 * elastic_taps(a.cfg.elastic_sigma).radius + 1 : 0.0;
  OpCase c = make_case(Op::augment_batch,
                       name + " N" + std::to_string(a.n) + " C" + std::to_string(a.c) + " " +
                           std::to_string(a.h) + "x" + std::to_string(a.w),
                       p, tol, 8.0 * pixels + field * 8.0 * taps, 4.0 * 2.0 * pixels, perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const AugmentArgs& a = p.augment;
    const size_t images = size_t(a.n) * a.c * a.h * a.w;
    std::vector<TensorSpec> v = {in("x", uniform(r, images, -1.f, 3.f)),
                                 in("fill", uniform(r, size_t(a.c), -1.f, -0.5f)),
                                 inout("step", {float(a.step)}, DType::I32),
                                 out("y", images * a.steps)};
    if (a.cfg.elastic)
      v.push_back(scratch("scratch", size_t(a.n) * kElasticScratchPlanes * a.h * a.w));
    return v;
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    const AugmentArgs& a = p.augment;
    const size_t images = size_t(a.n) * a.c * a.h * a.w;
    for (int s = 0; s < a.steps; ++s) {
      be.augment_batch(a.cfg, t.i32("step"), a.seed, a.n, a.c, a.h, a.w, t.f("fill"), t.f("x"),
                       a.cfg.elastic ? t.f("scratch") : nullptr, t.f("y") + s * images);
      be.increment(t.i32("step"));
    }
  };
  return c;
}

// Bilinear samples at coordinates from libm's sinf/cosf (affine) or from sums the device
// compiler may contract differently (the elastic displacement, alpha times a smoothed field).
constexpr Tolerance kResample{
    1e-5, "bilinear samples are continuous in their coordinates, which differ by a few ulps "
          "(libm's sinf/cosf, fma contraction): ~1e-6 here; a wrong pixel or parameter is 1e-1"};

void add_augment(std::vector<OpCase>& t, int B) {
  AugmentArgs a;
  a.seed = 5; a.step = 41; a.steps = 2;
  a.cfg.elastic = true;
  a.n = 5; a.c = 1; a.h = 28; a.w = 28;
  t.push_back(augment_case("elastic", a, kResample, false));
  a.cfg.elastic_sigma = 1.5f; a.cfg.elastic_alpha = 6.f;
  a.n = 3; a.c = 2; a.h = 7; a.w = 11;  // the Gaussian wider than the image
  t.push_back(augment_case("elastic sigma 1.5 alpha 6", a, kResample, false));
  a.cfg = AugmentConfig{};
  a.cfg.affine = true; a.cfg.affine_rotate = 30.f; a.cfg.affine_scale = 0.3f;
  a.cfg.affine_shear = 0.3f;
  a.n = 5; a.c = 3; a.h = 13; a.w = 17;
  t.push_back(augment_case("affine", a, kResample, false));
  a.cfg = AugmentConfig{};
  a.cfg.crop = true; a.cfg.flip = true; a.cfg.crop_pad = 3;
  a.n = 7; a.c = 2; a.h = 9; a.w = 6;
  t.push_back(augment_case("crop+flip", a, kExact, false));  // whole pixels: copies
  a.cfg.elastic = a.cfg.affine = true;
  a.n = 4; a.c = 3; a.h = 29; a.w = 29;
  t.push_back(augment_case("all four", a, kResample, false));
  // The batches of training: MNIST-sized images into Simard's 29x29 and LeNet-5's 28x28.
  a.cfg = AugmentConfig{};
  a.cfg.elastic = a.cfg.affine = true;
  a.n = B; a.c = 1; a.h = 29; a.w = 29; a.steps = 1;
  t.push_back(augment_case("elastic+affine", a, kResample, true));
  a.cfg = AugmentConfig{};
  a.cfg.crop = a.cfg.flip = true;
  a.h = a.w = 28;
  t.push_back(augment_case("crop+flip", a, kExact, true));
}

// ---- fused convolution ---------------------------------------------------------------------------

size_t fused_y_size(const Conv2dShape& s, const ConvEpilogue& e) {
  return e.pool == PoolKind::None ? s.y_size() : pooled_shape(s, e).y_size();
}

// The epilogue's element-wise work: bias, activation, pooling.
double epilogue_flops(const Conv2dShape& s, const ConvEpilogue& e) {
  double f = 2.0 * double(s.y_size());
  if (e.pool != PoolKind::None) f += pool_flops(pooled_shape(s, e));
  return f;
}

// What the forward keeps for the backward, in bytes (core/shapes.hpp ConvKept).
double kept_bytes(const Conv2dShape& s, const ConvEpilogue& e) {
  return double(s.N) * double(kept_bytes_per_image(s, e));
}

// The forward reads x, w, b and writes y and what it keeps.
double fused_forward_bytes(const Conv2dShape& s, const ConvEpilogue& e) {
  return 4.0 * double(s.x_size() + s.w_size() + size_t(s.K) + fused_y_size(s, e)) +
         kept_bytes(s, e);
}

// The backward reads x, w, dy, what was kept, and y where the activation's derivative comes from
// it (not after avg pooling: act_out); writes dw, db and dx.
double fused_backward_bytes(const Conv2dShape& s, const ConvEpilogue& e, bool want_dx) {
  const bool reads_y = e.act != Activation::None && e.pool != PoolKind::Avg;
  return 4.0 * ((want_dx ? 2.0 : 1.0) * double(s.x_size()) + 2.0 * double(s.w_size()) + s.K +
                (reads_y ? 2.0 : 1.0) * double(fused_y_size(s, e))) +
         kept_bytes(s, e);
}

// The case's kept tensors, as a Conv2D layer hands them to the fused ops.
ConvKept kept_of(const OpParams& p, const DeviceTensors& t) {
  ConvKept k;
  if (keeps_argmax(p.epi)) k.argmax = t.u8("argmax");
  if (keeps_act_out(p.epi)) k.act_out = t.f("act_out");
  return k;
}

void launch_fused_backward(Backend& be, const OpParams& p, const DeviceTensors& t) {
  be.conv2d_fused_backward(p.conv, p.epi, t.f("x"), t.f("w"), kept_of(p, t), t.f("y"), t.f("dy"),
                           t.f("scratch"), p.want_dx ? t.f("dx") : nullptr, t.f("dw"), t.f("db"));
}

// The backward reads the forward's own y, kept tensors and scratch (the forward case's tensors);
// the loss's gradient is "dy".
GradSpec fused_grad(bool want_dx) {
  return gradient(
      {Op::conv2d_fused_backward}, "y",
      want_dx ? std::vector<std::string>{"x", "w", "b"} : std::vector<std::string>{"w", "b"},
      launch_fused_backward);
}

// Whether the convolution's sums come out the same in any order (and with or without FMA), so
// that every backend pools the same values: the grid's multiples of 1/64 (Inputs::Grid), or a 1x1
// convolution of one channel by +-1 (Inputs::Ordered). With random inputs a near tie in a max
// pooling window may go either way in another summation order.
bool exact_sums(Inputs inputs) { return inputs != Inputs::Random; }

// The argmax bytes of a max-pooled forward: compared when the sums are exact, else only written
// (guarded, not compared): the y of those cases still checks the convolution's precision, which
// grid values (exact even in TF32) would not.
TensorSpec fused_argmax(const OpParams& p, Inputs inputs) {
  const size_t n = fused_y_size(p.conv, p.epi);
  if (exact_sums(inputs)) return out("argmax", n, DType::U8);
  return {"argmax", Role::Scratch, DType::U8, n, {}};
}

OpCase fused_forward(const std::string& name, const Conv2dShape& s, const ConvEpilogue& e,
                     bool perf, Inputs inputs = Inputs::Random) {
  OpParams p;
  p.conv = s;
  p.epi = e;
  const bool twin = inputs == Inputs::Grid && e.pool == PoolKind::Max;
  OpCase c =
      make_case(Op::conv2d_fused_forward,
                name + " " + describe(s) + describe(e) + (twin ? " (grid inputs)" : ""), p, kSum,
                s.forward_flops() + epilogue_flops(s, e), fused_forward_bytes(s, e), perf);
  c.tensors = [inputs](const OpParams& p, Rng& r) {
    const Conv2dShape& s = p.conv;
    Weights d = draw(r, inputs, s.x_size(), s.w_size(), size_t(s.K), 0.3f);
    std::vector<TensorSpec> v = {in("x", d.x), in("w", d.w), in("b", d.b)};
    if (keeps_argmax(p.epi)) v.push_back(fused_argmax(p, inputs));
    if (keeps_act_out(p.epi)) v.push_back(out("act_out", s.y_size()));
    v.push_back(scratch("scratch", s.y_size()));
    v.push_back(out("y", fused_y_size(s, p.epi)));
    return v;
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.conv2d_fused_forward(p.conv, p.epi, t.f("x"), t.f("w"), t.f("b"), kept_of(p, t),
                            t.f("scratch"), t.f("y"));
  };
  return c;
}

// The fused backward from what a forward leaves: y activated (the pooled size after pooling),
// argmax bytes at valid places (fused pooling is unpadded: any byte below window^2), or avg
// pooling's act_out activated.
OpCase fused_backward(const std::string& name, const Conv2dShape& s, const ConvEpilogue& e,
                      bool want_dx, bool perf) {
  OpParams p;
  p.conv = s;
  p.epi = e;
  p.want_dx = want_dx;
  const double dx = want_dx ? 1.0 : 0.0;
  OpCase c = make_case(Op::conv2d_fused_backward,
                       name + " " + describe(s) + describe(e) + (want_dx ? "" : " no dx"), p, kSum,
                       (1.0 + dx) * s.forward_flops() + epilogue_flops(s, e),
                       fused_backward_bytes(s, e, want_dx), perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const Conv2dShape& s = p.conv;
    std::vector<TensorSpec> v = {in("x", uniform(r, s.x_size())),
                                 in("w", uniform(r, s.w_size(), -0.3f, 0.3f))};
    if (keeps_argmax(p.epi))
      v.push_back(in("argmax", random_argmax(r, pooled_shape(s, p.epi)), DType::U8));
    if (keeps_act_out(p.epi)) v.push_back(in("act_out", activated(r, p.epi.act, s.y_size())));
    v.push_back(in("y", activated(r, p.epi.act, fused_y_size(s, p.epi))));
    v.push_back(in("dy", uniform(r, fused_y_size(s, p.epi))));
    v.push_back(scratch("scratch", s.y_size()));
    v.push_back(out("dw", s.w_size()));
    v.push_back(out("db", size_t(s.K)));
    if (p.want_dx) v.push_back(out("dx", s.x_size()));
    return v;
  };
  c.launch = launch_fused_backward;
  return c;
}

// A max-pooled layer again on grid inputs, whose exact sums make its argmax comparable (see
// exact_sums). Pre-activations stay small enough that tanh, sigmoid and ELU keep values 1/32
// apart distinct: on "every epilogue" (27 products of rms 0.2) |z| stays under ~5, where tanh
// still moves ~6e-6 per 1/32, a hundred float steps; the larger layers pool after ReLU or none.
OpCase argmax_twin(const Layer& l) {
  return fused_forward(l.name, l.s, l.epi, false, Inputs::Grid);
}

void add_fused_conv(std::vector<OpCase>& t, int B) {
  std::vector<Layer> shapes;
  // Every epilogue a layer can ask for: each activation with each pooling kind.
  const Conv2dShape small = conv_shape(2, 3, 8, 9, 4, 3, 3, 1, 1);
  for (Activation a : all_activations())
    for (PoolKind p : all_pool_kinds()) shapes.push_back({"every epilogue", small, epilogue(a, p)});
  // The real layers on small batches, and ragged or overlapping pooling after them.
  const auto convs = conv_test_shapes();
  shapes.push_back({"lenet5 conv1", convs[0].s, epilogue(Activation::ReLU, PoolKind::Max)});
  shapes.push_back({"lenet5 conv2", convs[1].s, epilogue(Activation::ReLU, PoolKind::Max)});
  shapes.push_back({"simard conv1", convs[2].s, epilogue(Activation::Tanh, PoolKind::None)});
  shapes.push_back({"simard conv2", convs[3].s, epilogue(Activation::Tanh, PoolKind::None)});
  shapes.push_back({"non-square", convs[4].s, epilogue(Activation::Sigmoid, PoolKind::Avg)});
  shapes.push_back({"stride3 ragged", convs[8].s, epilogue(Activation::ReLU, PoolKind::Max, 3, 2)});
  shapes.push_back({"1x1 pool only", convs[5].s, epilogue(Activation::None, PoolKind::Max)});
  // clang-format off
  shapes.insert(shapes.end(), {
      {"lenet5 conv2 N7", conv_shape(7, 6, 14, 14, 16, 5, 5, 1, 0), epilogue(Activation::Tanh, PoolKind::Avg)},
      {"odd P ragged", conv_shape(3, 2, 9, 9, 5, 3, 3, 1, 0), epilogue(Activation::ReLU, PoolKind::Max)},
      {"wide", conv_shape(2, 3, 40, 40, 20, 5, 5, 1, 2), epilogue(Activation::ReLU, PoolKind::Max)},
      // The data-gradient strips' zero halo is (R-1-pad) wide: none at pad 2 of a 3x3, 3 at pad 1
      // of a 5x5 (cuda's Tiled and Split kernels).
      {"3x3 pad 2", conv_shape(2, 3, 7, 8, 5, 3, 3, 1, 2), epilogue(Activation::ReLU, PoolKind::Max)},
      {"5x5 pad 1", conv_shape(2, 4, 9, 11, 6, 5, 5, 1, 1), epilogue(Activation::ELU, PoolKind::None)},
      {"16->24 channels stride 2", conv_shape(2, 16, 11, 11, 24, 3, 3, 2, 1),
       epilogue(Activation::Tanh, PoolKind::None)},
      {"16->32 channels overlapping pool", conv_shape(2, 16, 12, 12, 32, 3, 3, 1, 1),
       epilogue(Activation::ReLU, PoolKind::Max, 3, 2)},
      // cuda's data gradient one image a lane (5x5, stride 2): a second, partly filled group of
      // 32 images, a second, partly filled channel tile, three strips to a row, pad 1, pooling.
      {"5x5 stride 2 ragged", conv_shape(37, 7, 15, 31, 6, 5, 5, 2, 1),
       epilogue(Activation::ReLU, PoolKind::Max)},
      // cuda's strips (5 or 7 pooled columns a thread, 1-4 filters): a short last strip, an odd
      // filter count, avg pooling that keeps its pre-pool output, a third strip, pad 0.
      {"one channel 9 pooled columns", conv_shape(3, 1, 22, 20, 5, 5, 5, 1, 1),
       epilogue(Activation::Sigmoid, PoolKind::Avg)},
      {"one channel three strips", conv_shape(2, 1, 16, 36, 7, 5, 5, 1, 0),
       epilogue(Activation::Tanh, PoolKind::Max)},
      // The strip forward's 7-column strips (5 where those leave fewer idle, as above): one
      // channel with a short last strip, then four channels.
      {"one channel 13 pooled columns", conv_shape(2, 1, 10, 26, 4, 5, 5, 1, 2),
       epilogue(Activation::ReLU, PoolKind::Max)},
      {"four channels 14 pooled columns", conv_shape(2, 4, 12, 30, 5, 5, 5, 1, 1),
       epilogue(Activation::Tanh, PoolKind::Avg)},
      // cuda's weight gradient from the kept maxima (3x3 or 5x5, one channel): 3 x 3 windows,
      // a ragged row and column of conv outputs in none, more filters than its 8 warps.
      {"one channel 3x3 pool 3", conv_shape(3, 1, 13, 11, 10, 3, 3, 1, 1),
       epilogue(Activation::Sigmoid, PoolKind::Max, 3, 3)},
      // Its whole backward of a layer of several channels: (channel, filter row) pairs past one
      // warp's 32 (16 x 3), 3 x 3 windows with a ragged row and column; five channels of 5x5
      // with a ragged row, an odd filter count and more images than the rule gives a block.
      {"sixteen channels 3x3 pool 3", conv_shape(3, 16, 10, 11, 12, 3, 3, 1, 0),
       epilogue(Activation::ELU, PoolKind::Max, 3, 3)},
      {"five channels 5x5 ragged", conv_shape(5, 5, 13, 12, 9, 5, 5, 1, 1),
       epilogue(Activation::Tanh, PoolKind::Max)},
  });
  // clang-format on
  // Channel counts past the default shared memory of the cuda backend's Tiled kernels: 32
  // filters (its data-gradient blocks opt in to more), 64 (its GEMM path).
  for (int filters : {32, 64})
    shapes.push_back({"16->" + std::to_string(filters) + " channels",
                      conv_shape(3, 16, 14, 14, filters, 5, 5, 1, 0),
                      epilogue(Activation::ReLU, PoolKind::Max)});
  // Planes far past what a block holds in shared memory, as large inputs have (the first two
  // layers of examples/models/large512.json on smaller images).
  shapes.push_back({"large plane 7x7 stride 2", conv_shape(1, 1, 160, 160, 16, 7, 7, 2, 3),
                    epilogue(Activation::ReLU, PoolKind::Max)});
  shapes.push_back({"large plane 16->32", conv_shape(1, 16, 64, 64, 32, 5, 5, 1, 2),
                    epilogue(Activation::ReLU, PoolKind::Max)});
  shapes.push_back({"large plane one channel 5x5", conv_shape(1, 1, 96, 100, 6, 5, 5, 1, 2),
                    epilogue(Activation::ReLU, PoolKind::Max)});
  for (const ConvShape& s : convs) shapes.push_back({s.name, s.s, ConvEpilogue{}});
  for (const Layer& l : shapes) {
    t.push_back(fused_forward(l.name, l.s, l.epi, false));
    if (l.epi.pool == PoolKind::Max) t.push_back(argmax_twin(l));
    for (bool want_dx : {true, false}) t.push_back(fused_backward(l.name, l.s, l.epi, want_dx, false));
  }
  const Layer& simard2 = shapes[all_activations().size() * all_pool_kinds().size() + 3];
  t.push_back(unaligned(fused_forward(simard2.name, simard2.s, simard2.epi, false), {"w", "b"}));
  t.push_back(unaligned(fused_backward(simard2.name, simard2.s, simard2.epi, true, false),
                        {"w", "dw", "db"}));
  // Finite differences of every epilogue (the Conv2D layer's gradient), with inputs kept off the
  // kinks: a 3x3 convolution on grid values, or before max pooling a 1x1 one on ordered values;
  // then stride 2, and a first layer (no dx).
  std::vector<std::pair<Layer, Inputs>> grads;
  for (Activation a : all_activations())
    for (PoolKind k : all_pool_kinds()) {
      if (k == PoolKind::Max)  // ties: see Inputs::Ordered
        grads.push_back({{"gradient", conv_shape(2, 1, 6, 7, 2, 1, 1, 1, 0), epilogue(a, k)},
                         Inputs::Ordered});
      else
        grads.push_back({{"gradient", conv_shape(2, 3, 6, 8, 3, 3, 3, 1, 1), epilogue(a, k)},
                         Inputs::Grid});
    }
  grads.push_back({{"gradient", conv_shape(3, 1, 9, 9, 4, 3, 3, 2, 0),
                    epilogue(Activation::Tanh, PoolKind::None)}, Inputs::Grid});
  grads.push_back({{"gradient first layer", conv_shape(2, 1, 7, 7, 2, 1, 1, 1, 0),
                    epilogue(Activation::ReLU, PoolKind::Max)}, Inputs::Ordered});
  for (const auto& [l, inputs] : grads) {
    const bool want_dx = l.name != "gradient first layer";
    t.push_back(fused_forward(l.name, l.s, l.epi, false, inputs));
    t.back().p.want_dx = want_dx;
    t.back().grad = fused_grad(want_dx);
  }
  // As the models call them: the first layer (C == 1) wants no dx.
  for (const Layer& l : model_conv_layers(B)) {
    t.push_back(fused_forward(l.name, l.s, l.epi, true));
    if (l.epi.pool == PoolKind::Max) t.push_back(argmax_twin(l));
    t.push_back(fused_backward(l.name, l.s, l.epi, l.s.C > 1, true));
  }
}

// ---- fused linear --------------------------------------------------------------------------------

OpCase linear_forward(const Dense& d, bool perf, Inputs inputs = Inputs::Random) {
  OpParams p;
  p.N = d.N; p.in = d.in; p.out = d.out; p.act = d.act;
  const double flops = 2.0 * d.N * d.in * d.out + 2.0 * d.N * d.out;
  const double bytes = 4.0 * (double(d.N) * d.in + double(d.in) * d.out + d.out + double(d.N) * d.out);
  OpCase c = make_case(Op::linear_forward,
                       d.name + " N" + std::to_string(d.N) + " " + std::to_string(d.in) + "->" +
                           std::to_string(d.out) + " +" + activation_name(d.act),
                       p, kSum, flops, bytes, perf);
  c.tensors = [inputs](const OpParams& p, Rng& r) {
    Weights d = draw(r, inputs, size_t(p.N) * p.in, size_t(p.out) * p.in, size_t(p.out), 0.2f);
    return std::vector<TensorSpec>{in("x", d.x), in("w", d.w), in("b", d.b),
                                   out("y", size_t(p.N) * p.out)};
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.linear_forward(p.N, p.in, p.out, p.act, t.f("x"), t.f("w"), t.f("b"), t.f("y"));
  };
  return c;
}

void launch_linear_backward(Backend& be, const OpParams& p, const DeviceTensors& t) {
  be.linear_backward(p.N, p.in, p.out, p.act, t.f("x"), t.f("w"), t.f("y"), t.f("dy"),
                     t.f("scratch"), p.want_dx ? t.f("dx") : nullptr, t.f("dw"),
                     p.with_bias ? t.f("db") : nullptr);
}

OpCase linear_backward(const Dense& d, bool want_dx, bool with_db, bool perf) {
  OpParams p;
  p.N = d.N; p.in = d.in; p.out = d.out; p.act = d.act;
  p.want_dx = want_dx; p.with_bias = with_db;
  const double dx = want_dx ? 1.0 : 0.0;
  const double flops = (2.0 + 2.0 * dx) * d.N * d.in * d.out + 2.0 * d.N * d.out;
  const double bytes = 4.0 * ((1.0 + dx) * d.N * d.in + 2.0 * d.in * d.out + 2.0 * d.N * d.out + d.out);
  OpCase c = make_case(Op::linear_backward,
                       d.name + " N" + std::to_string(d.N) + " " + std::to_string(d.in) + "->" +
                           std::to_string(d.out) + " +" + activation_name(d.act) +
                           (want_dx ? "" : " no dx") + (with_db ? "" : " no db"),
                       p, kSum, flops, bytes, perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    std::vector<TensorSpec> v = {in("x", uniform(r, size_t(p.N) * p.in)),
                                 in("w", uniform(r, size_t(p.out) * p.in, -0.2f, 0.2f)),
                                 in("y", activated(r, p.act, size_t(p.N) * p.out)),
                                 in("dy", uniform(r, size_t(p.N) * p.out)),
                                 scratch("scratch", size_t(p.N) * p.out),
                                 out("dw", size_t(p.out) * p.in)};
    if (p.want_dx) v.push_back(out("dx", size_t(p.N) * p.in));
    if (p.with_bias) v.push_back(out("db", size_t(p.out)));
    return v;
  };
  c.launch = launch_linear_backward;
  return c;
}

void add_linear(std::vector<OpCase>& t, int B) {
  std::vector<Dense> shapes = {{"lenet5 fc1", 64, 400, 120, Activation::ReLU},
                               {"lenet5 fc3", 5, 84, 10, Activation::None},
                               {"simard fc1", 3, 1250, 100, Activation::Tanh},
                               {"ragged", 7, 13, 9, Activation::Sigmoid},
                               {"mlp fc1", 1, 784, 300, Activation::ReLU}};
  for (const Dense& d : shapes) {
    t.push_back(linear_forward(d, false));
    t.push_back(linear_backward(d, true, true, false));
  }
  t.push_back(linear_backward(shapes[3], false, false, false));
  t.push_back(unaligned(linear_forward(shapes[2], false), {"w", "b"}));
  t.push_back(unaligned(linear_backward(shapes[2], true, true, false), {"w", "dw", "db"}));
  // Every activation, small enough for finite differences (the Dense layer's gradient check).
  for (Activation act : all_activations()) {
    const Dense d{"small", 3, 12, 7, act};
    t.push_back(linear_forward(d, false, Inputs::Grid));
    t.back().grad = gradient({Op::linear_backward}, "y", {"x", "w", "b"}, launch_linear_backward,
                             {scratch("scratch", size_t(d.N) * d.out)});
    t.push_back(linear_backward(d, true, true, false));
  }
  for (const Dense& d : model_dense_layers(B)) {
    t.push_back(linear_forward(d, true));
    t.push_back(linear_backward(d, d.name != "mlp fc1", true, true));  // mlp fc1 is a first layer
  }
}

// ---- the fused ops on 16-bit activations -----------------------------------------------------------

// The launch of a 16-bit fused op: the backend's own form, or (Form16::Composed) the base class's
// default (backend_default_16.cpp: widen, the backend's fp32 op, round), called past the
// override; or the backend's own form without the staging floats (as the layers call a backend
// that does not want them: Backend::stages_16bit).
enum class Form16 { Own, Composed, OwnUnstaged };
Launch launch_16(Op op, Form16 form) {
  const bool composed = form == Form16::Composed, unstaged = form == Form16::OwnUnstaged;
// One argument list for both calls.
#define PCNN_CALL_16(name, ...) (composed ? be.Backend::name(__VA_ARGS__) : be.name(__VA_ARGS__))
  switch (op) {
    case Op::conv2d_fused_forward_16:
      return [composed, unstaged](Backend& be, const OpParams& p, const DeviceTensors& t) {
        float* const staging = unstaged ? nullptr : t.f("staging");
        PCNN_CALL_16(conv2d_fused_forward_16, p.precision, p.conv, p.epi,
                     p.x32 ? nullptr : t.u16("x"), p.x32 ? t.f("x") : nullptr, t.f("w"),
                     t.f("b"), kept_of(p, t), t.f("scratch"), staging, t.u16("y"));
      };
    case Op::conv2d_fused_backward_16:
      return [composed, unstaged](Backend& be, const OpParams& p, const DeviceTensors& t) {
        float* const staging = unstaged ? nullptr : t.f("staging");
        PCNN_CALL_16(conv2d_fused_backward_16, p.precision, p.conv, p.epi,
                     p.x32 ? nullptr : t.u16("x"), p.x32 ? t.f("x") : nullptr, t.f("w"),
                     kept_of(p, t), t.u16("y"), t.u16("dy"), t.f("scratch"), staging,
                     p.want_dx ? t.u16("dx") : nullptr, t.f("dw"), t.f("db"));
      };
    case Op::linear_forward_16:
      return [composed, unstaged](Backend& be, const OpParams& p, const DeviceTensors& t) {
        float* const staging = unstaged ? nullptr : t.f("staging");
        PCNN_CALL_16(linear_forward_16, p.precision, p.N, p.in, p.out, p.act, t.u16("x"),
                     t.f("w"), t.f("b"), staging, t.u16("y"));
      };
    default:
      PCNN_CHECK(op == Op::linear_backward_16, "no 16-bit launch for " << op_name(op));
      return [composed, unstaged](Backend& be, const OpParams& p, const DeviceTensors& t) {
        float* const staging = unstaged ? nullptr : t.f("staging");
        PCNN_CALL_16(linear_backward_16, p.precision, p.N, p.in, p.out, p.act, t.u16("x"),
                     t.f("w"), t.u16("y"), t.u16("dy"), t.f("scratch"), staging,
                     p.want_dx ? t.u16("dx") : nullptr, t.f("dw"),
                     p.with_bias ? t.f("db") : nullptr);
      };
  }
#undef PCNN_CALL_16
}

// An fp32 fused case as its 16-bit form: x, y, dy and dx stored in precision p (inputs drawn as
// before, then rounded to it), the staging floats the defaults widen into, no gradient check
// (finite differences of 16-bit values say nothing), the precision's tolerance. x32: a
// convolution's x stays fp32, as a model's first layer reads it.
OpCase sixteen_bit(OpCase c, Precision prec, bool x32 = false) {
  static const std::pair<Op, Op> kForms[] = {
      {Op::conv2d_fused_forward, Op::conv2d_fused_forward_16},
      {Op::conv2d_fused_backward, Op::conv2d_fused_backward_16},
      {Op::linear_forward, Op::linear_forward_16},
      {Op::linear_backward, Op::linear_backward_16}};
  const auto form = std::find_if(std::begin(kForms), std::end(kForms),
                                 [&](const auto& f) { return f.first == c.op; });
  PCNN_CHECK(form != std::end(kForms), "no 16-bit form of " << op_name(c.op));
  c.op = form->second;
  c.name = std::string(precision_name(prec)) + (x32 ? " (fp32 x) " : " ") + c.name;
  c.p.precision = prec;
  c.p.x32 = x32;
  c.tol = prec == Precision::BF16 ? kStorageBf16 : kStorageFp16;
  c.grad.reset();
  const bool backward = c.op == Op::conv2d_fused_backward_16 || c.op == Op::linear_backward_16;
  c.tensors = [base = c.tensors, prec, backward](const OpParams& p, Rng& r) {
    std::vector<TensorSpec> v = base(p, r);
    size_t staged = 0;  // x and y, as the contract sizes the staging
    for (TensorSpec& t : v) {
      if (t.name != "x" && t.name != "y" && t.name != "dy" && t.name != "dx") continue;
      if (t.name == "x" || t.name == "y") staged += t.size;
      if (t.name == "x" && p.x32) continue;
      t.type = prec == Precision::BF16 ? DType::BF16 : DType::F16;
    }
    v.push_back(scratch("staging", backward ? 2 * staged : staged));
    return v;
  };
  c.bytes /= 2;  // roughly: the activations move in half the bytes, the weights do not
  c.launch = launch_16(c.op, Form16::Own);
  return c;
}

void add_fused_16(std::vector<OpCase>& t, int B) {
  for (Precision prec : {Precision::BF16, Precision::F16}) {
    // Every epilogue on a small layer, both backward forms; the linear layers' shapes.
    const Conv2dShape small = conv_shape(2, 3, 8, 9, 4, 3, 3, 1, 1);
    for (Activation a : all_activations())
      for (PoolKind k : all_pool_kinds()) {
        t.push_back(sixteen_bit(fused_forward("every epilogue", small, epilogue(a, k), false), prec));
        for (bool want_dx : {true, false})
          t.push_back(sixteen_bit(fused_backward("every epilogue", small, epilogue(a, k), want_dx,
                                                 false), prec));
      }
    t.push_back(sixteen_bit(fused_forward("stride 2", conv_shape(2, 16, 11, 11, 24, 3, 3, 2, 1),
                                          epilogue(Activation::Tanh, PoolKind::None), false),
                            prec));
    for (const Dense& d : {Dense{"ragged", 7, 13, 9, Activation::Sigmoid},
                           Dense{"lenet5 fc1", 64, 400, 120, Activation::ReLU}}) {
      t.push_back(sixteen_bit(linear_forward(d, false), prec));
      t.push_back(sixteen_bit(linear_backward(d, true, true, false), prec));
      t.push_back(sixteen_bit(linear_backward(d, false, false, false), prec));
    }
    // The models' layers at the perf batch, as they train (a first layer wants no dx).
    for (const Layer& l : model_conv_layers(B)) {
      t.push_back(sixteen_bit(fused_forward(l.name, l.s, l.epi, true), prec));
      t.push_back(sixteen_bit(fused_backward(l.name, l.s, l.epi, l.s.C > 1, true), prec));
      if (l.s.C > 1) continue;
      // A first layer as a 16-bit model runs it: its fp32 input read as given, no dx.
      t.push_back(sixteen_bit(fused_forward(l.name, l.s, l.epi, true), prec, true));
      t.push_back(sixteen_bit(fused_backward(l.name, l.s, l.epi, false, true), prec, true));
    }
    // An RGB first layer at a batch where the tensor-core kernels take 16-bit inputs: with an
    // fp32 x the backend must run another kernel (or the composed default).
    const Conv2dShape rgb = conv_shape(256, 3, 16, 16, 8, 5, 5, 1, 2);
    const ConvEpilogue relu_max = epilogue(Activation::ReLU, PoolKind::Max);
    t.push_back(sixteen_bit(fused_forward("rgb first", rgb, relu_max, false), prec, true));
    t.push_back(sixteen_bit(fused_backward("rgb first", rgb, relu_max, false, false), prec, true));
    for (const Dense& d : model_dense_layers(B)) {
      t.push_back(sixteen_bit(linear_forward(d, true), prec));
      t.push_back(sixteen_bit(linear_backward(d, d.name != "mlp fc1", true, true), prec));
    }
  }
}

// ---- numerical faults ------------------------------------------------------------------------------


std::vector<float> with_faults(std::vector<float> v,
                               const std::vector<std::pair<size_t, float>>& faults) {
  for (const auto& [i, value] : faults) v[i] = value;
  return v;
}

OpCase check_step_case(const std::string& name, size_t n, const StepCheckArgs& a, bool perf) {
  OpParams p;
  p.n = n;
  p.check = a;
  // reads every gradient once; writes a few metrics
  OpCase c = make_case(Op::check_step, name + " n" + std::to_string(n), p, kExact,
                       double(n) * a.calls, 4.0 * n * a.calls, perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const StepCheckArgs& a = p.check;
    // skip: neither 0 nor 1; the loss scale static at 4, or dynamic at the edge of a move
    std::vector<float> hyper = hyper_values(0.05f, 0.9f, 5e-4f, 0.9f, 0.999f, 1e-8f, 0.5f, 4.f);
    hyper[kHyperGradUnscale] = 0.5f;  // rewritten by every call
    if (a.dynamic_scale) {
      hyper[kHyperLossScale] = 1024.f;
      hyper[kHyperScaleGoodSteps] = kLossScaleInterval - 2;  // the second finite call doubles
      hyper[kHyperScaleInterval] = kLossScaleInterval;
    }
    std::vector<TensorSpec> v = {in("grads", with_faults(uniform(r, p.n), a.faults)),
                                 inout("step", {1233.f}, DType::I32),
                                 inout("metrics", metrics_before_check(a.step_loss)),
                                 inout("hyper", hyper)};
    if (a.calls == 2) v.push_back(in("grads2", with_faults(uniform(r, p.n), a.faults2)));
    return v;
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.check_step(p.n, t.f("grads"), t.i32("step"), t.f("metrics"), t.f("hyper"));
    if (p.check.calls < 2) return;
    be.increment(t.i32("step"));
    be.check_step(p.n, t.f("grads2"), t.i32("step"), t.f("metrics"), t.f("hyper"));
  };
  return c;
}

using Faults = std::vector<std::pair<size_t, float>>;

StepCheckArgs faults_at(Faults faults, float step_loss = 0.75f) {
  StepCheckArgs a;
  a.faults = std::move(faults);
  a.step_loss = step_loss;
  return a;
}

// A second call, at the next step, on gradients with these faults.
StepCheckArgs then_at(StepCheckArgs a, Faults faults2) {
  a.calls = 2;
  a.faults2 = std::move(faults2);
  return a;
}

void add_check_step(std::vector<OpCase>& t, int) {
  const float nan = std::nanf(""), inf = INFINITY;
  t.push_back(check_step_case("finite", 10007, faults_at({}), false));
  t.push_back(check_step_case("finite", 61706, faults_at({}), true));  // LeNet-5's arena
  // faults at both ends of the arena, and the lowest of several found by any block
  t.push_back(check_step_case("NaN at 5000", 10007, faults_at({{5000, nan}}), false));
  t.push_back(check_step_case("NaN at 0", 10007, faults_at({{0, nan}}), false));
  t.push_back(check_step_case("-Inf at the end", 10007, faults_at({{10006, -inf}}), false));
  t.push_back(check_step_case("Inf at 61000 and 9000, NaN at 30000", 61706,
                              faults_at({{61000, inf}, {9000, inf}, {30000, nan}}), false));
  // an arena past a grid's first round of loads (one block a multiprocessor, four loads a thread)
  t.push_back(check_step_case("Inf at 290000 and 170000", 300007,
                              faults_at({{290000, inf}, {170000, inf}}), false));
  t.push_back(check_step_case("loss NaN", 1000, faults_at({}, nan), false));
  t.push_back(check_step_case("loss Inf", 1000, faults_at({}, inf), false));
  // the second fault (lower index, later step) must not replace the record of the first
  t.push_back(check_step_case("two faulty calls", 10007,
                              then_at(faults_at({{7000, nan}}), {{3, inf}}), false));
  t.push_back(check_step_case("faulty then finite", 10007, then_at(faults_at({{7000, nan}}), {}),
                              false));
  t.push_back(check_step_case("finite then faulty", 10007, then_at(faults_at({}), {{7, nan}}),
                              false));
  t.push_back(unaligned(check_step_case("NaN at 9001 unaligned", 10007,
                                        faults_at({{9001, nan}}), false),
                        {"grads"}));
  // fp16's dynamic loss scale: two finite steps reach the interval and double it; a fault halves
  // it and starts the count again
  for (StepCheckArgs a : {then_at(faults_at({}), {}), then_at(faults_at({}), {{7, nan}}),
                          then_at(faults_at({{7000, inf}}), {})}) {
    a.dynamic_scale = true;
    const std::string name = a.faults.empty() ? (a.faults2.empty() ? "finite twice" : "finite then faulty")
                                              : "faulty then finite";
    t.push_back(check_step_case(name + ", dynamic loss scale", 10007, a, false));
  }
}

// ---- optimizers ------------------------------------------------------------------------------------

void add_optimizers(std::vector<OpCase>& t, int) {
  for (Op op : {Op::sgd_update, Op::adam_update}) {
    t.push_back(optimizer_case(op, 10007, 3, false));  // not a multiple of any vector width
    t.push_back(optimizer_case(op, 61706, 1, true));   // LeNet-5's parameter arena
    t.push_back(unaligned(optimizer_case(op, 10007, 3, false),
                          {"params", "grads", "velocity", "m", "v"}));
    // a step check_step found faulty: params and state must come back as they went in
    t.push_back(optimizer_case(op, 10007, 2, false, true));
    t.push_back(unaligned(optimizer_case(op, 10007, 1, false, true),
                          {"params", "grads", "velocity", "m", "v"}));
    // gradients that carry a loss scale of 8: each is multiplied by 1/8 first
    OpCase c = optimizer_case(op, 10007, 2, false);
    c.p.loss_scale = 8.f;
    c.name += " loss scale 8";
    t.push_back(c);
  }
}

// ---- 16-bit storage ---------------------------------------------------------------------------

// Floats for round_to_16bit: random values over many binades, with the cases a conversion gets
// wrong: zeros, infinities, NaN, ties at both precisions' rounding bits, fp16's overflow edge
// (65504 stays, 65520 rounds to infinity), its subnormals and the float subnormals under them.
std::vector<float> rounding_inputs(Rng& r, size_t n) {
  std::vector<float> v = uniform(r, n, -3.f, 3.f);
  for (size_t i = 0; i < n; i += 3) v[i] = std::ldexp(v[i], int(r.next_u64() % 60) - 40);
  const float special[] = {0.f, -0.f, INFINITY, -INFINITY, std::nanf(""), 65504.f, 65519.f,
                           65520.f, -65536.f, 6.1035156e-5f, 5.9604645e-8f, 2.9802322e-8f,
                           2.9802326e-8f, 1e-40f, -3e-39f, 3.4028235e38f,
                           1.f + 1.f / 256,        // a bf16 tie, rounds to even (1)
                           1.f + 3.f / 256,        // a bf16 tie, rounds to even (up)
                           1.f + 1.f / 2048,       // an fp16 tie
                           1.f + 3.f / 2048, 1.00000012f, -1.f - 1.f / 128};
  for (size_t i = 0; i < sizeof special / sizeof special[0] && 7 * i < n; ++i)
    v[7 * i] = special[i];
  return v;
}

// Every finite 16-bit pattern of a precision, once (widen_16bit: no output may be non-finite).
std::vector<float> finite_patterns(Precision p) {
  std::vector<float> v;
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t exp_mask = p == Precision::BF16 ? 0x7f80u : 0x7c00u;
    if ((h & exp_mask) != exp_mask) v.push_back(float(h));
  }
  return v;
}

OpCase round_case(Precision prec, size_t n, float scale, bool perf) {
  OpParams p;
  p.n = n; p.precision = prec; p.loss_scale = scale;
  std::string name = std::string(precision_name(prec)) + " n" + std::to_string(n);
  if (scale != 1.f) name += " scale " + std::to_string(int(scale));
  OpCase c = make_case(Op::round_to_16bit, name, p, kExact, double(n), 6.0 * n, perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    std::vector<TensorSpec> v = {in("x", rounding_inputs(r, p.n)), out("y", p.n, DType::U16)};
    if (p.loss_scale != 1.f) v.push_back(in("scale", {p.loss_scale}));
    return v;
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.round_to_16bit(p.precision, p.n, t.f("x"), p.loss_scale != 1.f ? t.f("scale") : nullptr,
                      t.u16("y"));
  };
  return c;
}

OpCase widen_case(Precision prec, size_t n, bool perf) {
  OpParams p;
  p.n = n; p.precision = prec;
  OpCase c = make_case(Op::widen_16bit, std::string(precision_name(prec)) + " n" +
                                            std::to_string(n),
                       p, kExact, double(n), 6.0 * n, perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    std::vector<float> all = finite_patterns(p.precision), bits(p.n);
    for (size_t i = 0; i < p.n; ++i)  // every pattern when n covers them, else a random draw
      bits[i] = p.n >= all.size() ? all[i % all.size()] : all[r.next_u64() % all.size()];
    return std::vector<TensorSpec>{in("x", bits, DType::U16), out("y", p.n)};
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    be.widen_16bit(p.precision, p.n, t.u16("x"), t.f("y"));
  };
  return c;
}

void add_storage16(std::vector<OpCase>& t, int B) {
  for (Precision prec : {Precision::BF16, Precision::F16}) {
    t.push_back(round_case(prec, 1237, 1.f, false));
    t.push_back(round_case(prec, 1237, 32768.f, false));  // fp16's initial loss scale
    t.push_back(unaligned(round_case(prec, 1237, 1.f, false), {"x", "y"}));
    t.push_back(widen_case(prec, 65536, false));
    t.push_back(unaligned(widen_case(prec, 1237, false), {"x", "y"}));
    // LeNet-5's first activation at the perf batch, stored and read back
    t.push_back(round_case(prec, size_t(B) * 6 * 14 * 14, 1.f, true));
    t.push_back(widen_case(prec, size_t(B) * 6 * 14 * 14, true));
  }
}

}  // namespace

// ---- public builders -------------------------------------------------------------------------------

TensorSpec in(std::string name, std::vector<float> values, DType type) {
  const size_t n = values.size();
  return {std::move(name), Role::In, type, n, std::move(values)};
}
TensorSpec inout(std::string name, std::vector<float> values, DType type) {
  const size_t n = values.size();
  return {std::move(name), Role::InOut, type, n, std::move(values)};
}
TensorSpec out(std::string name, size_t size, DType type) {
  return {std::move(name), Role::Out, type, size, {}};
}
TensorSpec scratch(std::string name, size_t size) {
  return {std::move(name), Role::Scratch, DType::F32, size, {}};
}
TensorSpec misaligned(TensorSpec t, size_t offset) {
  t.offset = offset;
  return t;
}

std::string OpCase::label() const { return std::string(op_name(op)) + " " + name; }

uint64_t OpCase::seed() const {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (char ch : label()) h = (h ^ uint8_t(ch)) * 0x100000001b3ull;
  return h;
}

OpCase composed_16(OpCase c) {
  c.launch = launch_16(c.op, Form16::Composed);
  return c;
}

OpCase unstaged_16(OpCase c) {
  c.launch = launch_16(c.op, Form16::OwnUnstaged);
  return c;
}

bool stages_for(const Staging16& st, Op op) {
  return op == Op::conv2d_fused_forward_16 || op == Op::conv2d_fused_backward_16 ? st.conv
                                                                                 : st.dense;
}

bool is_fused_16(Op op) {
  return op == Op::conv2d_fused_forward_16 || op == Op::conv2d_fused_backward_16 ||
         op == Op::linear_forward_16 || op == Op::linear_backward_16;
}

OpCase gemm_case(const std::string& name, const GemmArgs& g, bool perf) {
  OpParams p;
  p.gemm = g;
  const double mn = double(g.M) * g.N;
  OpCase c = make_case(Op::gemm,
                       name + " " + std::to_string(g.M) + "x" + std::to_string(g.N) + "x" +
                           std::to_string(g.K) + (g.trans_a ? " A^T" : " A") +
                           (g.trans_b ? " B^T" : " B"),
                       p, kSum, 2.0 * mn * g.K,
                       4.0 * (double(g.M) * g.K + double(g.K) * g.N + mn * (g.beta != 0.f ? 2 : 1)),
                       perf);
  c.tensors = [](const OpParams& p, Rng& r) {
    const GemmArgs& g = p.gemm;
    const size_t mn = size_t(g.M) * g.N;
    // beta == 0 must ignore C: it starts as NaN
    return std::vector<TensorSpec>{in("A", uniform(r, size_t(g.M) * g.K)),
                                   in("B", uniform(r, size_t(g.K) * g.N)),
                                   g.beta == 0.f ? out("C", mn) : inout("C", uniform(r, mn))};
  };
  c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
    const GemmArgs& g = p.gemm;
    be.gemm(g.trans_a, g.trans_b, g.M, g.N, g.K, g.alpha, t.f("A"), g.trans_a ? g.M : g.K,
            t.f("B"), g.trans_b ? g.K : g.N, g.beta, t.f("C"), g.N);
  };
  return c;
}

OpCase optimizer_case(Op op, size_t n, int steps, bool perf, bool skip) {
  OpParams p;
  p.n = n;
  p.steps = steps;
  p.skip = skip;
  const bool adam = op == Op::adam_update;
  // per element and step: SGD reads p, g, v and writes p, v; Adam also reads and writes m
  OpCase c = make_case(op, "n" + std::to_string(n) + " x" + std::to_string(steps) + " steps" +
                               (skip ? " skipped" : ""), p,
                       kElementwise, (adam ? 16.0 : 6.0) * n * steps, 4.0 * (adam ? 7 : 5) * n * steps,
                       perf);
  if (adam) {
    c.tensors = [](const OpParams& p, Rng& r) {
      return std::vector<TensorSpec>{
          inout("params", uniform(r, p.n)), in("grads", uniform(r, p.n)),
          inout("m", uniform(r, p.n)), inout("v", uniform(r, p.n, 0.f, 1.f)),
          in("hyper", hyper_values(1e-3f, 0.f, 1e-4f, 0.9f, 0.999f, 1e-8f, p.skip ? 1.f : 0.f,
                                   p.loss_scale)),
          inout("step", {0.f}, DType::I32)};
    };
    c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
      for (int s = 0; s < p.steps; ++s) {
        be.adam_update(p.n, t.f("params"), t.f("grads"), t.f("m"), t.f("v"), t.f("hyper"),
                       t.i32("step"));
        be.increment(t.i32("step"));
      }
    };
  } else {
    c.tensors = [](const OpParams& p, Rng& r) {
      return std::vector<TensorSpec>{inout("params", uniform(r, p.n)), in("grads", uniform(r, p.n)),
                                     inout("velocity", uniform(r, p.n)),
                                     in("hyper", hyper_values(0.05f, 0.9f, 5e-4f, 0.9f, 0.999f,
                                                              1e-8f, p.skip ? 1.f : 0.f,
                                                              p.loss_scale))};
    };
    c.launch = [](Backend& be, const OpParams& p, const DeviceTensors& t) {
      for (int s = 0; s < p.steps; ++s)
        be.sgd_update(p.n, t.f("params"), t.f("grads"), t.f("velocity"), t.f("hyper"));
    };
  }
  return c;
}

std::vector<OpCase> op_table(int perf_batch) {
  std::vector<OpCase> t;
  add_gemm(t, perf_batch);
  add_conv(t, perf_batch);
  add_pool(t, perf_batch);
  add_bias(t, perf_batch);
  add_batchnorm(t, perf_batch);
  add_activation(t, perf_batch);
  add_softmax(t, perf_batch);
  add_softmax_16(t, perf_batch);
  add_check_step(t, perf_batch);
  add_optimizers(t, perf_batch);
  add_gather(t, perf_batch);
  add_augment(t, perf_batch);
  add_fused_conv(t, perf_batch);
  add_linear(t, perf_batch);
  add_dropout(t, perf_batch);
  add_global_pool(t, perf_batch);
  add_storage16(t, perf_batch);
  add_fused_16(t, perf_batch);
  // A perf case that is also a test case (a model's layer at batch 64) is one case, timed.
  std::vector<OpCase> unique;
  for (OpCase& c : t) {
    auto same = std::find_if(unique.begin(), unique.end(),
                             [&](const OpCase& u) { return u.label() == c.label(); });
    if (same == unique.end()) unique.push_back(std::move(c));
    else same->perf = same->perf || c.perf;
  }
  return unique;
}

// The 16-bit forms of the backward ops are not among them: finite differences of 16-bit values
// measure the rounding, and each is checked against serial's 16-bit form, which is the fp32
// op (whose gradient is checked) between conversions.
bool has_gradient(Op op) {
  const std::string name = op_name(op);
  if (name.size() > 3 && name.compare(name.size() - 3, 3, "_16") == 0) return false;
  return name.find("_backward") != std::string::npos ||
         op == Op::softmax_cross_entropy;  // the loss returns its own gradient
}

std::vector<float> hyper_values(float lr, float momentum, float weight_decay, float beta1,
                                float beta2, float eps, float skip, float loss_scale) {
  std::vector<float> h(kHyperCount, 0.f);
  h[kHyperLr] = lr; h[kHyperMomentum] = momentum; h[kHyperWeightDecay] = weight_decay;
  h[kHyperBeta1] = beta1; h[kHyperBeta2] = beta2; h[kHyperEps] = eps; h[kHyperSkip] = skip;
  h[kHyperLossScale] = loss_scale;
  h[kHyperGradUnscale] = 1.f / loss_scale;
  return h;
}

std::vector<float> metrics_before_check(float step_loss) {
  std::vector<float> m(kMetricCount, 0.f);
  m[kMetricLossSum] = 12.5f;
  m[kMetricCorrect] = 30.f;
  m[kMetricStepLoss] = step_loss;
  m[kMetricStepCorrect] = 5.f;
  return m;
}

}  // namespace pcnn::test
