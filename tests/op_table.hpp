// The op-case table: every kernel op of core/op_list.hpp, each case with its parameters, seeded
// inputs, tolerance (and why), FLOPs and bytes, the call that runs it on a backend and, for the
// differentiable ops, the finite-difference check of its gradient. One table drives three modes
// (ggml's test-backend-ops is the model):
//   test  every case on a backend against serial            (doctest suite "backend", --mode test)
//   grad  central differences of the forward against the backward ops (suite "backend", --mode grad)
//   perf  median time, GFLOP/s and GB/s per case and backend (--mode perf)
// and the CUDA kernel lab takes its cases, buffers and checks from here as well.
//
// Adding a case: in op_table.cpp, push one more shape in the op's add_* function (the builder
// names the case, draws its inputs, counts FLOPs and bytes). A new op gets a builder (OpParams
// fields, tensors, launch, tolerance with its reason), an add_* function called from op_table(),
// and, if it has a gradient, a GradSpec on its forward case whose backward is the backward op's
// launch. The "core" suite fails while an op of core/op_list.hpp has no case or no perf case, or
// a gradient op (a *_backward op, the loss) no grad case.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/device_array.hpp"
#include "core/rng.hpp"

namespace pcnn::test {

// ---- tolerances: normalised L2 error against serial, with the reason for the number --------
struct Tolerance {
  double value;
  const char* why;
};
inline constexpr Tolerance kExact{0.0, "copies, integer index work and comparisons: bit-exact"};
inline constexpr Tolerance kElementwise{
    1e-5, "one formula per element (core/*_math.hpp): only the device's libm may differ"};
inline constexpr Tolerance kSum{
    2e-5, "fp32 sums in another order differ by ~sqrt(terms) ulp (~1e-6 here); a wrong index "
          "or a missing term gives 1e-2 and more"};
// The 16-bit fused ops: outputs rounded to bf16 or fp16 after fp32 sums. An fp32 result another
// order moves by an ulp lands on the other side of a rounding boundary now and then, and that
// element then stores one 16-bit step apart: 2^-8 relative in bf16, 2^-11 in fp16 (at most that
// in the normalised error even if every element moved). A native kernel that also rounds the
// weights for tensor-core products adds random rounding of rms step/sqrt(12) per product, about
// 1e-3 (bf16) and 1.4e-4 (fp16) of the sums, inside the same bounds. A wrong index, a missing
// conversion or a value left in the other 16-bit format is off by 1e-2 and more.
inline constexpr Tolerance kStorageBf16{
    4e-3, "bf16 outputs: an fp32 sum an ulp off may store one bf16 step (2^-8) apart"};
inline constexpr Tolerance kStorageFp16{
    5e-4, "fp16 outputs: an fp32 sum an ulp off may store one fp16 step (2^-11) apart"};

// ---- a case's tensors, on the host --------------------------------------------------------
// U16: 16-bit patterns compared exactly; BF16, F16: values stored in that precision (initial
// values rounded to it on upload, read back widened, compared with the case's tolerance).
enum class DType { F32, I32, U8, U16, BF16, F16 };
enum class Role {
  In,       // uploaded, not compared
  Out,      // NaN-poisoned, written by the op, compared
  InOut,    // uploaded, updated by the op (accumulators, optimizer state), compared
  Scratch,  // NaN-poisoned, neither read first nor compared
};
struct TensorSpec {
  std::string name;
  Role role = Role::In;
  DType type = DType::F32;
  size_t size = 0;
  std::vector<float> init;  // In / InOut values; integers (labels, pixels, counters) held exactly
  size_t offset = 0;        // elements past a 256-byte boundary: parameters are slices of one
                            // arena, so a bias or a weight may start anywhere
};
TensorSpec in(std::string name, std::vector<float> values, DType type = DType::F32);
TensorSpec inout(std::string name, std::vector<float> values, DType type = DType::F32);
TensorSpec out(std::string name, size_t size, DType type = DType::F32);
TensorSpec scratch(std::string name, size_t size);
TensorSpec misaligned(TensorSpec t, size_t offset = 1);

// ---- a case's tensors in one backend's memory ----------------------------------------------
struct Output {
  std::string name;
  std::vector<float> values;
  bool exact = false;  // integers (indices, counters, labels): kExact whatever the case's tolerance
};

// Each tensor sits between guard bytes (256 on each side, keeping the 256-byte alignment), so an
// op that writes past its output is caught even where NaN-poisoning cannot see it.
class DeviceTensors {
 public:
  DeviceTensors(Backend& be, std::vector<TensorSpec> specs);
  float* f(const std::string& name) const;
  int32_t* i32(const std::string& name) const;
  uint8_t* u8(const std::string& name) const;
  uint16_t* u16(const std::string& name) const;
  const TensorSpec& spec(const std::string& name) const;
  // New host values for an input (finite differences perturb one element), uploaded now.
  void set(const std::string& name, const std::vector<float>& values);
  // Back to the initial state: inputs uploaded again, outputs and scratch NaN-poisoned.
  void reset();
  void reset_accumulators();  // InOut only: what an op updates in place
  std::vector<float> download(const std::string& name) const;  // as floats
  // The compared tensors (Out and InOut). problems: guard bytes overwritten, an input changed.
  std::vector<Output> outputs(std::string* problems = nullptr) const;

 private:
  void upload(size_t i);
  size_t index(const std::string& name) const;
  Backend& be_;
  std::vector<TensorSpec> specs_;
  std::vector<DeviceArray<uint8_t>> mem_;
};

// ---- a case --------------------------------------------------------------------------------
struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int M = 1, N = 1, K = 1;
  float alpha = 1.f, beta = 0.f;
};
struct GatherArgs {
  int count = 0, height = 0, width = 0;  // the uint8 data set
  float mean = 0.f, inv_std = 1.f;       // channel c: mean + 0.1c, inv_std + 0.5c
  int channels = 1;
  BatchLayout layout;
  int steps = 1;            // gather_train_batch: batches per launch (the counter advances)
  int steps_per_epoch = 1;  // gather_train_batch
  uint32_t seed = 0;        // gather_train_batch
  int first = 0;            // gather_batch
};

// dropout_*: the rate, the pass's seed, the layer's salt and the step the counter holds.
struct DropoutArgs {
  float rate = 0.5f;
  uint32_t seed = 0, salt = 0;
  int32_t step = 0;
};

// augment_batch: what is applied to a batch of n images of c x h x w, at which counter.
struct AugmentArgs {
  AugmentConfig cfg;
  int n = 1, c = 1, h = 1, w = 1;
  uint32_t seed = 0;
  int32_t step = 0;  // the counter at the first launch
  int steps = 1;     // launches (the counter advances between them)
};

// check_step: which gradients are not finite, the step's loss, and a second call's faults.
struct StepCheckArgs {
  std::vector<std::pair<size_t, float>> faults;   // grads[index] = value (NaN, Inf)
  float step_loss = 0.75f;                        // metrics[kMetricStepLoss] before the call
  int calls = 1;                                  // 2: again on "grads2" at the next step
  std::vector<std::pair<size_t, float>> faults2;  // grads2's
  bool dynamic_scale = false;  // the loss scale dynamic, one finite step short of doubling
};

// Every op's parameters; a case sets the ones its op reads.
struct OpParams {
  Conv2dShape conv;                   // conv2d_*, conv2d_fused_*
  ConvEpilogue epi;                   // conv2d_fused_*
  Pool2dShape pool;                   // pool2d_*
  PoolKind pool_kind = PoolKind::Max;
  GemmArgs gemm;
  Activation act = Activation::None;  // activation_*, linear_*
  int N = 0, C = 0, HW = 0;           // bias_*, global_avg_pool_* (N,C,HW); softmax (N rows, C
                                      // classes); linear N
  int in = 0, out = 0;                // linear_*
  size_t n = 0;                       // element-wise ops (dropout_* too) and optimizers
  int steps = 1;                      // optimizer steps per launch
  bool skip = false;                  // optimizers: hyper[kHyperSkip] set, nothing may change
  StepCheckArgs check;                // check_step
  bool with_bias = true;              // conv2d_forward b, conv2d_backward_weights db, linear db
  bool want_dx = true;                // backward ops: dx or nullptr (a first layer); softmax dlogits
  bool in_place = false;              // activations: x == y, dy == dx
  bool with_argmax = true;            // pool2d_forward (max): argmax, or nullptr as a pooling
                                      // layer of its own passes (it keeps no indices)
  GatherArgs gather;
  float eps = 1e-5f, momentum = 0.1f;  // batchnorm_* (N, C, HW above)
  DropoutArgs dropout;                // dropout_*
  AugmentArgs augment;                // augment_batch
  Precision precision = Precision::BF16;  // round_to_16bit, widen_16bit
  bool x32 = false;  // conv2d_fused_*_16: x in fp32 (a model's first layer reads its input so)
  float loss_scale = 1.f;             // round_to_16bit's scale (1: nullptr); optimizers'
                                      // GradUnscale is its inverse
};

using Launch = std::function<void(Backend&, const OpParams&, const DeviceTensors&)>;

// Finite differences: L = sum(r * out) over the output `of` (r random unless fixed), the
// analytic dL/d(input) from `backward` (the backward op's launch), which reads dL/d(of) from the
// tensor `d_of` ("d" + of unless set) and writes "d<input>" for each input in `wrt`. A coordinate
// whose estimates at eps and eps/2 disagree sits on a kink (ReLU at 0, a max-pool tie) and is
// skipped, at most a fifth of them; the inputs are drawn to keep off kinks (op_table.cpp).
// Pass: |numeric - analytic| <= rel * rms(analytic) + abs.
struct GradSpec {
  std::vector<Op> checks;        // the ops whose results are checked as the gradient
  std::string of;                // the output the loss sums
  std::string d_of;              // its gradient's tensor ("" means "d" + of)
  std::vector<std::string> wrt;  // inputs differentiated
  Launch backward;
  std::vector<TensorSpec> extra;  // scratch the backward needs
  std::vector<float> r;           // fixed dL/d(of) (the mean loss of softmax), else random
  float eps = 1e-2f;
  double rel = 2e-2, abs = 1e-3;
  const char* why = "";
  int coords = 12;  // coordinates sampled per input (all of a smaller one)
};

struct OpCase {
  Op op = Op::gemm;
  std::string name;  // shapes and options, e.g. "N5 C1 28x28 K6 5x5 pad2"
  OpParams p;
  Tolerance tol = kSum;
  double flops = 0, bytes = 0;  // per launch; bytes: what the op must read and write at least
  bool perf = false;            // timed by --mode perf by default (the models' real layers)
  std::function<std::vector<TensorSpec>(const OpParams&, Rng&)> tensors;
  Launch launch;
  std::optional<GradSpec> grad;

  std::string label() const;  // "<op> <name>"
  uint64_t seed() const;      // from the label: a case's inputs do not depend on table order
};

// The table. perf_batch: the batch of the perf cases (the models' layers).
std::vector<OpCase> op_table(int perf_batch = 64);

// The metrics before a check_step: the epoch's sums, this step's loss and correct count, no
// fault (the op's table cases and its core tests start from it).
std::vector<float> metrics_before_check(float step_loss);

// A hyper array (kHyperCount floats, core/contract_types.hpp) as the optimizer writes it; the
// loss scale's slots static at `loss_scale` unless check_step cases set them.
std::vector<float> hyper_values(float lr, float momentum, float weight_decay, float beta1,
                                float beta2, float eps, float skip, float loss_scale = 1.f);

// Builders the kernel lab shares for shapes outside the table (too large for a CPU test).
OpCase gemm_case(const std::string& name, const GemmArgs& g, bool perf);
OpCase optimizer_case(Op op, size_t n, int steps, bool perf, bool skip = false);

// The fused ops on 16-bit activations, and such a case as the base class computes it (widen, the
// backend's fp32 op, round: backends/backend_default_16.cpp), called past the backend's override.
// A backend's own 16-bit form that keeps fp32 products gives these bits exactly.
bool is_fused_16(Op op);
OpCase composed_16(OpCase c);
// The case with no staging floats passed, as the layers call a backend that does not want them;
// and whether `st` (Backend::stages_16bit) wants them for op.
OpCase unstaged_16(OpCase c);
bool stages_for(const Staging16& st, Op op);

// Ops whose result is a gradient: they need a grad case (the backward ops, and the loss).
bool has_gradient(Op op);

// ---- running a case ------------------------------------------------------------------------
struct RunResult {
  std::vector<Output> outputs;
  std::string problems;  // guard bytes overwritten, an input changed, an exception
};
struct Verdict {
  bool ok = true;
  std::string detail;  // every failure: output, error, first mismatching indices; or the reason
  int skipped = 0;     // grad: coordinates on kinks
};

// The case's host tensors, from its seed.
std::vector<TensorSpec> case_tensors(const OpCase& c);
// Runs c on be from fresh tensors.
RunResult run_case(Backend& be, const OpCase& c);
// got against want (serial's), output by output, with the case's tolerance.
Verdict compare_outputs(const OpCase& c, const RunResult& got, const RunResult& want);
// Finite differences of c on be (c.grad must be set).
Verdict check_gradient(Backend& be, const OpCase& c);

}  // namespace pcnn::test
