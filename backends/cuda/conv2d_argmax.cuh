// Convolution backward of max-pooled layers read off the kept maxima: under max pooling only each
// window's kept maximum has a gradient, so these kernels visit one conv output a window (a
// quarter of them under 2 x 2 pooling) where the strip and Tiled kernels multiply the other
// three by zero. Two kernels: the weight gradient of a one-channel first layer
// (conv2d_backward_argmax.cu) and the whole backward, dw, db and dx, of a layer of several
// channels (conv2d_backward_argmax_layer.cu). Why: notes/tuning-cuda.md, "The first layer's
// weight gradient from the kept maxima" and "The whole backward from the kept maxima".
#pragma once

#include <cooperative_groups.h>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d_common.cuh"
#include "backends/cuda/cuda_context.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// Block: a chunk of images, staged whole in shared memory; warp w: filters w, w + warps, ...
struct ArgmaxDwPlan {
  bool ok = false;
  int taps = 0;  // the filter's side: 3 or 5 (the kernels compiled)
  int warps = 1, imgs = 1, chunks = 1;
  int group = 16;  // chunks a first-level sum adds (sum_chunk_rows; CudaContext::argmax_group)
  int cluster = 1;  // blocks a cluster (sum_cluster_rows; CudaContext::argmax_cluster)
};
// chunks: 0 for the rule's (about four blocks a multiprocessor).
ArgmaxDwPlan plan_dw_argmax(const CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                            int chunks);
void run_dw_argmax(CudaContext& ctx, const ArgmaxDwPlan& p, const Conv2dShape& s,
                   const DactSource& d, const ActIn& x, float* dw, float* db);

// The layer kernel's block: a chunk of `imgs` images. Its warps first take the weight gradient
// a filter each, then the data gradient a unit each: one image and `kper` filters into a dx
// buffer of the unit's own (`kg` units an image), summed in unit order at the end. Planes are
// kept `stride` floats a row and `plane` floats apart, chosen so that the lanes' loads of one
// item fall on 32 different banks.
struct ArgmaxLayerPlan {
  bool ok = false, want_dw = false, want_dx = false;
  int taps = 0, rounds = 1;  // filter side (3 or 5); (channel, filter row) pairs / 32, rounded up
  int warps = 8, imgs = 1, kg = 1, kper = 1, chunks = 1;
  int group = 16, cluster = 1;  // as ArgmaxDwPlan's
  int stride = 0, plane = 0;
  // shared memory: where the items start, where the chunk's row is kept (cluster > 1), in all
  long long items_at = 0, row_at = 0, bytes = 0;
};
// chunks, threads: 0 for the rule's (about four blocks a multiprocessor; 8 warps).
ArgmaxLayerPlan plan_layer_argmax(const CudaContext& ctx, const Conv2dShape& s,
                                  const ConvEpilogue& epi, bool want_dw, bool want_dx, int chunks,
                                  int threads);
void run_layer_argmax(CudaContext& ctx, const ArgmaxLayerPlan& p, const Conv2dShape& s,
                      const DactSource& d, const ActIn& x, const float* w, const ActOut& dx,
                      float* dw, float* db);

// The storage format a kernel's 16-bit staging reads, decided once on the host so that its loops
// widen without a test per element: ActIn::load tests the format of every element, and for 16
// bits computes both widenings (bf16's shift and fp16's rebias) before it picks one. kFmtAny:
// tested per element, as ActIn::load does; what fp32 runs (step lab, H100, session 37: an fp32
// read fixed the same way made LeNet-5's fp32 step 0.9-3.5 us longer, while the fixed 16-bit
// reads made the bf16 step 0.8-4.0 us shorter) and what dy and y of different formats need.
constexpr int kFmtAny = 0, kFmtBf16 = 1, kFmtF16 = 2;
inline int fixed_format(Precision p) {
  return p == Precision::BF16 ? kFmtBf16 : p == Precision::F16 ? kFmtF16 : kFmtAny;
}
// The format dy and y share (y unread without an activation), else kFmtAny.
inline int dact_format(const DactSource& d) {
  if (d.act != Activation::None && d.y.prec != d.dy.prec) return kFmtAny;
  return fixed_format(d.dy.prec);
}

// Element i of a in format Fmt (kFmtAny: as ActIn::load).
template <int Fmt>
__device__ __forceinline__ float load_as(const ActIn& a, size_t i) {
  if constexpr (Fmt == kFmtBf16) return bf16_to_float(static_cast<const uint16_t*>(a.p)[i]);
  else if constexpr (Fmt == kFmtF16) return f16_to_float(static_cast<const uint16_t*>(a.p)[i]);
  else return a.load(i);
}

// Whole block: the gradient (dy through the activation) and kept argmax of the windows o0 ..
// o0 + count - 1 in dy's order, four of each in flight a thread (coalesced), each handed to
// put(e, gradient, argmax) with e counted from o0; dy and y read in format Fmt. Every load of a
// round is issued before any value is used: a lane past the block's windows reads its last one
// again (in bounds, count >= 1) and drops it, so no branch stands between the loads. Behind a
// bounds test each, an element's multiply by act'(y) waited for its loads before the next
// element's were issued: four round trips a round instead of one. With the same change to the
// layer kernel's and the tensor-core forward's 16-bit staging (step lab, H100, session 38): the
// bf16 LeNet-5 step 202.0 -> 197.0 us at 1024, 80.1 -> 77.2 at 64; fp32 level; ncu, bf16 at
// 1024: this kernel 38.6 -> 33.1 us, the layer kernel 46.9 -> 44.0, conv2's forward 32.4 -> 29.7.
template <int Fmt, class Put>
__device__ __forceinline__ void load_windows_as(const DactSource& d, size_t o0, int count,
                                                Put put) {
  constexpr int U = 4;
  const bool act = d.act != Activation::None;
  for (int e0 = threadIdx.x; e0 < count; e0 += U * blockDim.x) {
    float dy[U], y[U];
    int a[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t o = o0 + min(e0 + u * int(blockDim.x), count - 1);
      dy[u] = load_as<Fmt>(d.dy, o);
      y[u] = act ? load_as<Fmt>(d.y, o) : 0.f;
      a[u] = d.argmax[o];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = e0 + u * blockDim.x;
      if (e < count) put(e, act ? dy[u] * activation_derivative(d.act, y[u]) : dy[u], a[u]);
    }
  }
}

// load_windows_as in the format `fmt` (dact_format).
template <class Put>
__device__ __forceinline__ void load_windows(const DactSource& d, size_t o0, int count, int fmt,
                                             Put put) {
  switch (fmt) {
    case kFmtBf16: load_windows_as<kFmtBf16>(d, o0, count, put); break;
    case kFmtF16: load_windows_as<kFmtF16>(d, o0, count, put); break;
    default: load_windows_as<kFmtAny>(d, o0, count, put); break;
  }
}

// The counters sum_chunk_rows uses: one a group of `group` chunks, and one for the groups.
__host__ __device__ inline int argmax_counters(int chunks, int group) {
  return (chunks + group - 1) / group + 1;
}

// The sums of `count` rows `pitch` floats apart (pitch a multiple of 4, rows 16-byte aligned), a
// float4 column a thread at a time, rows in order, eight loads in flight: put(c, sums of floats
// 4c .. 4c + 3). A quarter of the load instructions of one float a column (LeNet-5's conv2: rows
// of 2,416 floats, 9 to 19 columns a thread one at a time).
template <class Put>
__device__ inline void sum_rows4(const float* rows, int count, int pitch, Put put) {
  constexpr int kInFlight = 8;
  const int n4 = pitch / 4;
  const float4* r = reinterpret_cast<const float4*>(rows);
  for (int c = threadIdx.x; c < n4; c += blockDim.x) {
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int i0 = 0; i0 < count; i0 += kInFlight) {
      float4 t[kInFlight];
#pragma unroll
      for (int i = 0; i < kInFlight; ++i)
        t[i] = i0 + i < count ? __ldcg(r + size_t(i0 + i) * n4 + c) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int i = 0; i < kInFlight; ++i) {
        s.x += t[i].x;
        s.y += t[i].y;
        s.z += t[i].z;
        s.w += t[i].w;
      }
    }
    put(c, s);
  }
}

// The chunks' rows of nv floats at `partial` (chunk c at c * pitch), added in a fixed order, so a
// run's bits repeat: the last block of each group of `group` chunks adds its group's rows into a
// row after the chunks' (one a group), and the last of those the groups' rows, handing each sum
// to put(v, sum): two levels, so neither last block adds a long column (one where there is one
// group: its sums are the totals). Every thread of every block calls it; counters:
// argmax_counters. Vec4: by float4 columns (sum_rows4; pitch a multiple of 4, partial 16-byte
// aligned), else a float a column (sum_rows_as, pitch == nv).
template <bool Vec4, class Put>
__device__ inline void sum_chunk_rows(float* partial, unsigned* counters, int chunk, int chunks,
                                      int group_size, int nv, int pitch, int sum_loads, Put put) {
  const int groups = (chunks + group_size - 1) / group_size, group = chunk / group_size;
  const int first = group * group_size, in_group = min(group_size, chunks - first);
  if (!last_block_done(&counters[group], unsigned(in_group))) return;
  if (groups == 1) {
    if constexpr (Vec4) {
      sum_rows4(partial, chunks, pitch, [&](int c, float4 s) {
        const float v4[4] = {s.x, s.y, s.z, s.w};
        for (int u = 0; u < 4 && 4 * c + u < nv; ++u) put(4 * c + u, v4[u]);
      });
    } else {
      for (int v = threadIdx.x; v < nv; v += blockDim.x)
        put(v, sum_rows_as(sum_loads, partial + v, chunks, pitch));
    }
    return;
  }
  float* sums = partial + size_t(chunks) * pitch;
  float* mine = sums + size_t(group) * pitch;
  const float* rows = partial + size_t(first) * pitch;
  if constexpr (Vec4) {
    sum_rows4(rows, in_group, pitch,
              [&](int c, float4 s) { reinterpret_cast<float4*>(mine)[c] = s; });
  } else {
    for (int v = threadIdx.x; v < nv; v += blockDim.x)
      mine[v] = sum_rows_as(sum_loads, rows + v, in_group, pitch);
  }
  if (!last_block_done(&counters[groups], unsigned(groups))) return;
  if constexpr (Vec4) {
    sum_rows4(sums, groups, pitch, [&](int c, float4 s) {
      const float v4[4] = {s.x, s.y, s.z, s.w};
      for (int u = 0; u < 4 && 4 * c + u < nv; ++u) put(4 * c + u, v4[u]);
    });
  } else {
    for (int v = threadIdx.x; v < nv; v += blockDim.x)
      put(v, sum_rows_as(sum_loads, sums + v, groups, pitch));
  }
}

// Halves of the cluster-wide barrier (barrier.cluster; every thread of the cluster's blocks takes
// part): arrive releases this thread's writes, shared memory included, and wait returns once
// every thread has arrived, acquiring theirs. Apart, so that a block can work between them.
__device__ __forceinline__ void cluster_arrive() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

// The chunks' sums when the grid runs in clusters (CudaContext::argmax_cluster; 8 blocks at
// most): each block's row of nv floats is in its own shared memory at `row`. Block `rank` of a
// cluster adds floats [v0, v1) of its cluster's rows, in rank order, read from the other blocks'
// shared memory, into the cluster's row of `partial` (nv floats a cluster); the clusters' rows
// of that slice are then added as sum_chunk_rows adds chunks, on counters of the slice's own.
// Against sum_chunk_rows over the chunks: one store, fence, atomic and load round trip fewer,
// and the last sums spread over `cluster` blocks. The bits repeat from run to run (a fixed
// order) but are not sum_chunk_rows' (another order). Eight loads in flight in those sums (the
// clusters' rows are few; 32 made the layer kernel spill at its 64 registers). Every thread of
// every block calls it; counters: cluster * argmax_counters(chunks / cluster, group).
template <class Put>
__device__ inline void sum_cluster_rows(const float* row, float* partial, unsigned* counters,
                                        int nv, int group, Put put) {
  constexpr int kMaxCluster = 8;
  const cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int size = int(cluster.num_blocks()), rank = int(cluster.block_rank());
  const int clusters = int(gridDim.x) / size, ci = int(blockIdx.x) / size;
  const int per = (nv + size - 1) / size, v0 = min(nv, rank * per), v1 = min(nv, v0 + per);
  cluster_arrive();
  cluster_wait();  // every block's row is in place
  for (int v = v0 + threadIdx.x; v < v1; v += blockDim.x) {
    float t[kMaxCluster];
#pragma unroll
    for (int r = 0; r < kMaxCluster; ++r)
      t[r] = r < size ? cluster.map_shared_rank(row, r)[v] : 0.f;
    float sum = 0.f;
#pragma unroll
    for (int r = 0; r < kMaxCluster; ++r)
      if (r < size) sum += t[r];
    partial[size_t(ci) * nv + v] = sum;
  }
  cluster_arrive();  // done reading the others' rows; a block's row must outlive their reads
  sum_chunk_rows<false>(partial + v0, counters + rank * argmax_counters(clusters, group), ci,
                        clusters, group, v1 - v0, nv, 8,
                        [&](int v, float sum) { put(v0 + v, sum); });
  cluster_wait();
}

}  // namespace pcnn::cuda
