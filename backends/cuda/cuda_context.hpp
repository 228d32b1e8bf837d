// The GPU state of the cuda backend, and of cudnn built on it: the device, the one stream all
// work goes to, whole-step graph capture and replay, lazily grown scratch (never grown while
// capturing, never freed under a graph that may still use it) and the self-resetting counters
// of last-block reductions. The kernel launchers (and the kernel lab) take this context.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "backends/cuda/scratch_buffer.hpp"

namespace pcnn::cuda {

// cudaMalloc that throws on failure and leaves no stale error for the next launch check.
void* malloc_device(size_t bytes);

class CudaContext {
 public:
  // Throws pcnn::Unavailable when there is no usable GPU with this ordinal.
  explicit CudaContext(int device);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }
  int sm_count() const { return sm_count_; }
  // Shared memory a block may opt in to (cudaFuncAttributeMaxDynamicSharedMemorySize), in floats.
  int smem_optin_floats() const { return smem_optin_floats_; }
  const std::string& device_name() const { return name_; }
  // Whether kernels go out as programmatic dependent launches (launch.cuh): on compute
  // capability 9.0 and up unless PCNN_DEPENDENT_LAUNCH=0 (a measuring aid: the same binary with
  // and without them).
  bool dependent_launches() const { return dependent_launches_; }
  // Whether Auto may pick the tensor-core kernels for 16-bit activations (the convolutions'
  // conv2d_forward_mma.cuh and conv2d_backward_mma.cu, the dense layers' gemm_mma.cuh): PCNN_MMA=0
  // never (a measuring aid, as the one above: the FMA kernels' native 16-bit forms in the same
  // binary), 1 wherever they fit (the test suite's small cases run them so), unset where they
  // pay (conv2d.cuh auto_takes_mma, linear_16.cu run_16).
  bool mma_allowed() const { return mma_ != 0; }
  bool mma_forced() const { return mma_ == 1; }
  // Whether Split's data gradient may run one image a lane on the strided shapes it is compiled
  // for (conv2d_backward_lanes.cu), and its weight gradient too: PCNN_CONV_LANES=0 neither, 1 the
  // data gradient alone (measuring aids), unset or 2 both.
  bool lanes_allowed() const { return lanes_ >= 1; }
  bool lanes_dw() const { return lanes_ == 2; }
  // Which of the dense layers' vector tiles (gemm_tile.cuh) Auto may pick, measuring aids:
  // PCNN_GEMM_VEC=0 none (the scalar tiles), 1 TileVec64 alone, unset or 2 TileVec32 as well.
  bool vec_tiles_allowed() const { return vec_tiles_ >= 1; }
  bool vec32_tiles_allowed() const { return vec_tiles_ >= 2; }
  // Chunks a first-level sum of the kept-maxima kernels adds up (conv2d_argmax.cuh
  // sum_chunk_rows): the smallest multiple of 8 at least the square root of the chunks, so that
  // both levels are about as long (LeNet-5 at 64: 8 groups of 8 chunks); PCNN_ARGMAX_GROUP=8,
  // 16 or 32 fixes it instead, a measuring aid (16: the rule before session 37; step lab, H100,
  // LeNet-5, against it: -1.0 us at batch 64, -1.2 at 1024 in bf16, level at 256).
  int argmax_group(int chunks) const;
  // Blocks a cluster of the kept-maxima kernels adds its chunks' rows over in distributed shared
  // memory before the groups' sums (conv2d_argmax.cuh sum_cluster_rows): 8, 4 or 2, the largest
  // that divides the chunks, where the device launches clusters and the chunks leave half the
  // multiprocessors free; else 1 (sum_chunk_rows alone). PCNN_CLUSTER_SUMS=0 never, 2 whatever
  // the chunks (measuring aids). Step lab, H100, session 39, LeNet-5 (both kernels in 64, 128,
  // 256 chunks at those batches): at 64 fp32 73.0 -> 69.1-69.6 us a step, bf16 76.8 -> 72.9-73.4;
  // at 128 level in fp32 and 0.3-1.2 us slower in bf16; at 256 8-9 us slower (a first rule, up
  // to 256 chunks: 112.0-112.5 -> 120.7-121.5 in fp32).
  int argmax_cluster(int chunks) const;
  // Where Auto may pick the strip kernels (conv2d_strip.cuh: the forward of 5x5 pooled layers,
  // the weight gradient of one-channel ones): unset or PCNN_CONV_STRIP=1 where their launch has
  // threads enough to pay (conv2d_forward.cu auto_takes_strip, conv2d_backward.cu strip_plan),
  // 2 wherever they fit (the test suite's backend_cuda_strip), 0 nowhere (to measure them).
  int strip_level() const { return strip_; }
  // Whether Auto takes the backward of max-pooled layers from the kept maxima where it fits
  // (conv2d_argmax.cuh): the weight gradient of one-channel first layers unless
  // PCNN_CONV_ARGMAX=0, the whole backward of the others unless it is 0 or 1 (measuring aids;
  // the test suite's backend_cuda_strip and backend_cuda_images entries, so that the strip and
  // Tiled kernels stay tested on those layers).
  bool argmax_dw() const { return argmax_ >= 1; }
  bool argmax_layers() const { return argmax_ >= 2; }
  // Whether a 16-bit model's loss is one launch (loss.cu softmax_cross_entropy_16) or, under
  // PCNN_LOSS16=0, the default's three (a measuring aid).
  bool loss16() const { return loss16_ != 0; }
  // Whether the strip forward hands its pooled outputs out a warp at a time where it can
  // (conv2d_forward_strip.cuh strip_can_coalesce): yes unless PCNN_STRIP_STORE=0 (a measuring
  // aid; step lab, H100, session 32: LeNet-5 fp32 at 1024 321 -> 311 us a step with them).
  bool strip_store() const { return strip_store_; }
  // Output rows a thread of the convolution backward's data-gradient strip path computes
  // (conv2d_backward_tiled_kernels.cuh): PCNN_DX_ROWS=1 or 2 for every layer, a measuring aid;
  // 0 (unset): by the launch's size (conv2d_backward.cu strip_dx_rows).
  int dx_rows() const { return dx_rows_; }
  // Images a block of that two-row path may take, at most (conv2d_backward.cu dx_images):
  // PCNN_DX_IMAGES=1..8, a measuring aid; unset, as many as the block has threads for.
  int dx_images() const { return dx_images_; }
  // The most threads of the convolution backward's weight-gradient blocks, for every layer whose
  // plan leaves it open (conv2d.cuh dw_threads): PCNN_CONV_DW_THREADS=128, 256 or 512, a
  // measuring aid; 0 (unset): by the shape (conv2d_backward.cu auto_dw_threads).
  int conv_dw_threads() const { return conv_dw_threads_; }
  // Loads a thread keeps in flight where a reduction adds up chunk sums (common.cuh sum_rows):
  // 32, or PCNN_SUM_LOADS=8, a measuring aid.
  int sum_loads() const { return sum_loads_; }
  // How the convolution backward's weight-gradient blocks are planned (conv2d_backward.cu
  // plan_fused, tile_choice), a measuring aid: PCNN_CONV_DW_BLOCKS=0 as before session 26
  // (fewer chunks, wider filter tiles), 1 the session-26 plan, 2 that plan with a filter tile
  // that leaves filters idle giving way to the next smaller one where that one covers them
  // exactly, 3 (session 27's default) the faster of those two tiles, timed on the shape's first
  // call, 4 the faster of the session-26 tile and the next smaller one whatever they cover, 5
  // (the default since session 28) plan 3's pair or else plan 4's where both tiles are in one
  // module; unset: kDwPlan.
  int dw_plan() const { return dw_plan_; }
  bool dw_blocks_before() const { return dw_plan_ == 0; }
  static constexpr int kDwPlan = 5;

  // ---- choices made by timing ----------------------------------------------------------------
  // Auto times two plans of a convolution backward on a shape's first call and keeps the faster
  // here, per context (conv2d_backward.cu faster_plan): one launch or two (ConvSplit;
  // PCNN_CONV_SPLIT=0|1 forces it: forced_conv_split() 0 or 1, -1 to time it), and under plans
  // 3-5 (dw_plan) the weight-gradient blocks' filter tile, the rule's or a smaller one
  // (ConvTile). `key` names the shape and its epilogue; PCNN_CUDA_LOG=1 prints each timing.
  enum class Choice { ConvSplit, ConvTile };
  using ChoiceKey = std::array<int, 13>;
  int forced_conv_split() const { return forced_conv_split_; }
  bool log_choices() const { return log_choices_; }
  // nullptr: not timed yet; else whether the second plan timed was the faster
  const bool* timed_choice(Choice what, const ChoiceKey& key) const;
  void set_timed_choice(Choice what, const ChoiceKey& key, bool second) {
    choices_[{what, key}] = second;
  }

  // Makes this context's GPU the calling thread's current device (a no-op when it already is):
  // replicas of a data-parallel run each own a GPU and may share one host thread.
  void bind() const;

  // ---- whole-step graphs ----------------------------------------------------------------
  // True while the stream is being captured into a graph.
  bool capturing() const;
  // Thread-local capture: an unsafe call from this thread (an allocation, a sync) fails loudly.
  void begin_capture();
  // Instantiates what was captured, replacing (and freeing the scratch retired under) the
  // previous graph, and uploads it so the first replay is not slower than the rest.
  void end_capture();
  void launch_graph();
  // Ends a capture that cannot complete, so the stream accepts ordinary work again.
  void abandon_capture() noexcept;

  // ---- scratch --------------------------------------------------------------------------
  // At least `floats` floats of device scratch for the cuda kernels, contents undefined; grows by
  // half again so a slightly larger request does not allocate again.
  float* scratch(size_t floats);
  // A second such buffer, for an operand one op materialises and then hands to kernels that use
  // scratch() themselves (the convolution backward's d(act_out) before its split-K GEMMs).
  float* scratch_aux(size_t floats);
  // A third, the staging floats of a 16-bit op the backend composes (a shape its kernels do not
  // read in 16 bits): the layers pass none to this backend (CudaBackend::stages_16bit).
  float* staging16(size_t floats);

  // `count` unsigned counters, zero on entry to every kernel: kernels that use them to find the
  // last block of a reduction put them back to zero before they finish. count <= kCounters.
  unsigned* counters(size_t count);
  static constexpr size_t kCounters = 1 << 14;

  // An outgrown scratch buffer: freed once queued work is done, or kept until the graph that may
  // point into it is replaced or destroyed (an evaluation pass with a new batch size may grow a
  // buffer between two replays).
  void retire(void* buffer);

 private:
  void release() noexcept;  // everything the constructor got, in reverse order
  void reserve_placement_pad();  // PCNN_PAD_DEVICE_MEMORY
  void free_retired() noexcept;

  int device_ = 0;
  int sm_count_ = 1;
  int smem_optin_floats_ = 0;
  bool dependent_launches_ = false;
  int forced_conv_split_ = -1;
  int mma_ = -1;  // PCNN_MMA: 0, 1, or -1 unset
  int lanes_ = 2;  // PCNN_CONV_LANES: 0, 1 or 2
  int vec_tiles_ = 2;  // PCNN_GEMM_VEC: 0, 1 or 2 (unset)
  int argmax_group_ = 0;  // PCNN_ARGMAX_GROUP: 8, 16 or 32; 0 (unset) the rule
  int cluster_sums_ = 1;  // PCNN_CLUSTER_SUMS: 0, 1 or 2; 0 as well without cluster launches
  int strip_ = 1;          // PCNN_CONV_STRIP: 0, 1 or 2
  int argmax_ = 2;         // PCNN_CONV_ARGMAX: 0, 1 or 2
  int loss16_ = 1;         // PCNN_LOSS16: 0 or 1
  bool strip_store_ = true;   // PCNN_STRIP_STORE=0 turns it off
  int dx_images_ = 8;         // PCNN_DX_IMAGES: 1..8 (unset: 8)
  int dx_rows_ = 0;           // PCNN_DX_ROWS: 1, 2, or 0 (unset)
  int conv_dw_threads_ = 0;  // PCNN_CONV_DW_THREADS
  int sum_loads_ = 32;       // PCNN_SUM_LOADS
  int dw_plan_ = kDwPlan;  // PCNN_CONV_DW_BLOCKS
  bool log_choices_ = false;
  std::map<std::pair<Choice, ChoiceKey>, bool> choices_;  // -> the second plan was faster
  std::string name_;
  cudaStream_t stream_ = nullptr;
  unsigned* counters_ = nullptr;
  void* pad_ = nullptr;  // PCNN_PAD_DEVICE_MEMORY's reservation, if any
  cudaGraphExec_t graph_ = nullptr;
  std::vector<void*> retired_;  // outgrown scratch the graph may still point into
  ScratchBuffer scratch_{*this, "the cuda kernels' scratch"};
  ScratchBuffer scratch_aux_{*this, "the cuda kernels' second scratch"};
  ScratchBuffer staging16_{*this, "the composed 16-bit ops' staging"};
};

}  // namespace pcnn::cuda
