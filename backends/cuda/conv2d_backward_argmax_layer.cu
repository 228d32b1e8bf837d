// The whole backward of a max-pooled layer of several channels from the kept maxima
// (conv2d_argmax.cuh): dw, db and dx. An item is one pooling window of one image and filter:
// its gradient (dy through the activation) and its kept argmax pick the one conv output with a
// gradient. Lane (c, r) of a warp takes the item's channel c and filter row r: F multiply-adds
// of the F inputs under that row into its F weight sums, and F of the filter's taps into F
// values of the image's dx. LeNet-5's conv2 (6 -> 16, 5 x 5) gives 30 lanes, 150 multiply-adds
// an item for each gradient, a quarter of what the Tiled kernel does (it runs every conv output,
// three of each four with a zero gradient), and dx skips items whose gradient is zero (ReLU
// cut them). The items' gradient and place are broadcasts; the lanes' inputs fall on 32
// different banks by the planes' layout (plan_layer_argmax). dx is a scatter: each warp adds
// into a buffer of its own in program order, and the buffers are summed in a fixed order, so a
// run's bits repeat with no atomics. Measured: notes/tuning-cuda.md, "The whole backward from
// the kept maxima" (LeNet-5's conv2 at 1024 on an H100: 43.8 us against Tiled's 101.5).
#include <cuda_runtime.h>

#include <algorithm>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d_argmax.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"

namespace pcnn::cuda {

namespace {

// 16 warps at most (the rule's), two such blocks a multiprocessor: 64 registers (ptxas).
constexpr int kMaxWarps = 16;

// What the kernel needs of the plan.
struct LayerArgs {
  int imgs, kg, kper, chunks, group, cluster, stride, plane, pitch, sum_loads;
  int dfmt, xfmt;  // the formats of dy and y, and of x (conv2d_argmax.cuh dact_format)
  bool want_dw, want_dx;
  long long items_at, row_at;
};

// Whole block: images n .. n + count - 1 of x into xs, each plane zero-padded to
// (H + 2 pad) x (W + 2 pad), its rows `stride` floats apart and the planes `plane` apart. fp32
// by cp.async (every copy of a thread in flight; copy_async_wait() before reading), 16-bit words
// through registers, four in flight, widened as format Fmt says (conv2d_argmax.cuh load_as).
template <int Fmt>
__device__ __forceinline__ void stage_planes_as(const Conv2dShape& s, const ActIn& x, int n,
                                                int count, int stride, int plane, float* xs) {
  const int Hp = s.H + 2 * s.pad, Wp = s.W + 2 * s.pad, planes = count * s.C;
  const size_t xn = size_t(n) * s.C * s.H * s.W;
  if (x.prec == Precision::F32) {
#pragma unroll 4
    for (BoxWalk e(Hp, Wp); e.plane < planes; e.next()) {
      float* dst = xs + e.plane * plane + e.row * stride + e.col;
      const int h = e.row - s.pad, wi = e.col - s.pad;
      if (h < 0 || h >= s.H || wi < 0 || wi >= s.W)
        *dst = 0.f;
      else
        copy_async(dst,
                   static_cast<const float*>(x.p) + xn + (size_t(e.plane) * s.H + h) * s.W + wi);
    }
    return;
  }
  // Four words a round, all loaded before any is stored: a padding place or one past the chunk
  // reads the chunk's first word (in bounds) and stores a zero or nothing, so no branch stands
  // between the loads (load_windows_as says why).
  constexpr int U = 4;
  for (BoxWalk e(Hp, Wp); e.plane < planes;) {
    float v[U];
    int at[U];  // where in xs; -1 past the chunk
    bool pad[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int h = e.row - s.pad, wi = e.col - s.pad;
      const bool in = e.plane < planes;
      pad[u] = h < 0 || h >= s.H || wi < 0 || wi >= s.W;
      at[u] = in ? e.plane * plane + e.row * stride + e.col : -1;
      const size_t i = in && !pad[u] ? xn + (size_t(e.plane) * s.H + h) * s.W + wi : xn;
      v[u] = load_as<Fmt>(x, i);
      e.next();
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (at[u] >= 0) xs[at[u]] = pad[u] ? 0.f : v[u];
  }
}
// stage_planes_as in x's format `fmt` (fixed_format).
__device__ __forceinline__ void stage_planes(const Conv2dShape& s, const ActIn& x, int n,
                                             int count, int stride, int plane, int fmt,
                                             float* xs) {
  switch (fmt) {
    case kFmtBf16: stage_planes_as<kFmtBf16>(s, x, n, count, stride, plane, xs); break;
    case kFmtF16: stage_planes_as<kFmtF16>(s, x, n, count, stride, plane, xs); break;
    default: stage_planes_as<kFmtAny>(s, x, n, count, stride, plane, xs); break;
  }
}

// Whole block: each window's item of images n .. n + count - 1, every filter, in dy's order:
// its gradient's bits and where its conv output's inputs start in a staged plane.
__device__ __forceinline__ void stage_items(const Conv2dShape& s, const DactSource& d, int n,
                                            int count, int stride, int fmt, int2* items) {
  const int pw = d.pw, Q2 = s.Q() / pw, windows = (s.P() / pw) * Q2;
  const auto put = [&](int e, float g, int a) {
    const int win = e % windows, pp = win / Q2, pq = win - pp * Q2;
    const int ai = a / pw, aj = a - ai * pw;
    items[e] = make_int2(__float_as_int(g), (pp * pw + ai) * stride + pq * pw + aj);
  };
  load_windows(d, size_t(n) * s.K * windows, count * s.K * windows, fmt, put);
}

// Block: the chunk's images, every filter. Stage the images and items; the weight gradient, a
// warp a filter, each lane's F sums a row of the chunk's row (in `partial`, or in shared memory
// where the blocks run in clusters); then the data gradient in the same shared memory (the
// images are no longer read), a warp a unit; dx written out; the chunks' rows summed
// (sum_chunk_rows, by float4 columns: rows `pitch` floats apart; or sum_cluster_rows).
template <int F, int J>
__global__ void __launch_bounds__(kMaxWarps * 32, 2)
    conv2d_backward_kernel_argmax(Conv2dShape s, DactSource d, ActIn x, const float* w,
                                  ActOut dx, float* partial, unsigned* counters, float* dw,
                                  float* db, LayerArgs a) {
  wait_for_previous_kernel();
  extern __shared__ __align__(16) unsigned char smem[];
  float* region = reinterpret_cast<float*>(smem);
  const int2* items = reinterpret_cast<const int2*>(smem + a.items_at);
  const int windows = (s.P() / d.pw) * (s.Q() / d.pw);
  const int chunk = blockIdx.x, n0 = chunk * a.imgs, count = min(a.imgs, s.N - n0);
  const int img_floats = s.C * a.plane, taps = s.C * F * F;
  if (a.want_dw) stage_planes(s, x, n0, count, a.stride, a.plane, a.xfmt, region);
  stage_items(s, d, n0, count, a.stride, a.dfmt, reinterpret_cast<int2*>(smem + a.items_at));
  copy_async_wait();
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  int off[J];  // lane (c, r) of round j: plane c, row r
  bool on[J];
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const int p = lane + 32 * j, c = p / F, r = p - c * F;
    on[j] = p < s.C * F;
    off[j] = c * a.plane + r * a.stride;
  }
  // The chunk's row of weight sums: in shared memory where the blocks run in clusters.
  float* const row = a.cluster > 1 ? reinterpret_cast<float*>(smem + a.row_at)
                                   : partial + size_t(chunk) * a.pitch;
  if (a.want_dw) {
    for (int k = warp; k < s.K; k += warps) {
      float acc[J][F];
#pragma unroll
      for (int j = 0; j < J; ++j)
#pragma unroll
        for (int q = 0; q < F; ++q) acc[j][q] = 0.f;
      float gsum = 0.f;
      for (int img = 0; img < count; ++img) {
        const int2* it = items + (img * s.K + k) * windows;
        const float* xi = region + img * img_floats;
        // No test for a zero gradient here: without a branch the loads of several items are in
        // flight together (dx, whose items wait on each other's stores, skips them instead).
#pragma unroll 4
        for (int v = 0; v < windows; ++v) {
          const int2 t = it[v];
          const float g = __int_as_float(t.x);
          gsum += g;
#pragma unroll
          for (int j = 0; j < J; ++j) {
            if (!on[j]) continue;
            const float* at = xi + t.y + off[j];
#pragma unroll
            for (int q = 0; q < F; ++q) acc[j][q] = fmaf(g, at[q], acc[j][q]);
          }
        }
      }
#pragma unroll
      for (int j = 0; j < J; ++j)
        if (on[j])
#pragma unroll
          for (int q = 0; q < F; ++q) row[k * taps + (lane + 32 * j) * F + q] = acc[j][q];
      if (lane == 0) row[s.K * taps + k] = gsum;
    }
  }
  if (a.want_dx) {
    const int units = count * a.kg;
    __syncthreads();  // the staged images are read no more: the buffers take their place
    for (int i = threadIdx.x; i < units * img_floats; i += blockDim.x) region[i] = 0.f;
    __syncthreads();
    for (int u = warp; u < units; u += warps) {
      const int img = u / a.kg, k0 = (u - img * a.kg) * a.kper, k1 = min(s.K, k0 + a.kper);
      float* buf = region + u * img_floats;
      for (int k = k0; k < k1; ++k) {
        float wr[J][F];
#pragma unroll
        for (int j = 0; j < J; ++j)
#pragma unroll
          for (int q = 0; q < F; ++q)
            wr[j][q] = on[j] ? __ldg(w + k * taps + (lane + 32 * j) * F + q) : 0.f;
        const int2* it = items + (img * s.K + k) * windows;
        for (int v = 0; v < windows; ++v) {
          const int2 t = it[v];
          const float g = __int_as_float(t.x);
          if (g == 0.f) continue;  // the same in every lane
#pragma unroll
          for (int j = 0; j < J; ++j) {
            if (!on[j]) continue;
            float* at = buf + t.y + off[j];
#pragma unroll
            for (int q = 0; q < F; ++q) at[q] = fmaf(g, wr[j][q], at[q]);
          }
          __syncwarp();  // the next item's lanes may read what another lane just wrote
        }
      }
    }
    __syncthreads();
    const size_t base = size_t(n0) * s.C * s.H * s.W;
    for (BoxWalk e(s.H, s.W); e.plane < count * s.C; e.next()) {
      const int img = e.plane / s.C, c = e.plane - img * s.C;
      const float* src = region + (img * a.kg * s.C + c) * a.plane + (e.row + s.pad) * a.stride +
                         e.col + s.pad;
      float v = 0.f;
      for (int g = 0; g < a.kg; ++g) v += src[g * img_floats];
      dx.store(base + e.index, v);
    }
  }
  if (!a.want_dw) return;
  const auto put = [&](int v, float sum) {
    if (v < s.K * taps) {
      if (dw) dw[v] = sum;
    } else if (db) {
      db[v - s.K * taps] = sum;
    }
  };
  if (a.cluster > 1)
    sum_cluster_rows(row, partial, counters, s.K * (taps + 1), a.group, put);
  else
    sum_chunk_rows<true>(partial, counters, chunk, a.chunks, a.group, s.K * (taps + 1), a.pitch,
                         a.sum_loads, put);
}

// The planes' layout: rows `stride` floats apart, planes `plane` apart, the smallest plane for
// which the lanes (c, r) of each round of 32 read 32 different banks (c * plane + r * stride
// modulo 32), or failing that the fewest lanes a bank. LeNet-5's conv2: 14 and 205 floats.
void choose_layout(const Conv2dShape& s, int F, int& stride, int& plane) {
  const int Hp = s.H + 2 * s.pad, Wp = s.W + 2 * s.pad, pairs = s.C * F;
  int best_degree = 33;
  for (int st = Wp; st < Wp + 32; ++st) {
    if (best_degree == 1 && Hp * st >= plane) break;  // no smaller plane is left
    for (int pl = Hp * st; pl < Hp * st + 32; ++pl) {
      int degree = 0;
      for (int j = 0; j < pairs; j += 32) {
        int hits[32] = {};
        for (int p = j; p < std::min(pairs, j + 32); ++p)
          degree = std::max(degree, ++hits[((p / F) * pl + (p % F) * st) % 32]);
      }
      if (degree < best_degree || (degree == best_degree && pl < plane)) {
        best_degree = degree;
        stride = st;
        plane = pl;
      }
      if (degree == 1) break;
    }
  }
}

template <int F, int J>
void launch_layer(CudaContext& ctx, const ArgmaxLayerPlan& p, const Conv2dShape& s,
                  const DactSource& d, const ActIn& x, const float* w, const ActOut& dx,
                  float* partial, unsigned* counters, float* dw, float* db, const LayerArgs& a) {
  constexpr auto kernel = conv2d_backward_kernel_argmax<F, J>;
  if (p.bytes > kDefaultSmemBytes) allow_opt_in_smem<kernel>(ctx);
  launch_clustered(ctx, "conv2d_backward_kernel_argmax", p.cluster, kernel, p.chunks,
                   p.warps * 32, size_t(p.bytes), s, d, x, w, dx, partial, counters, dw, db, a);
}

}  // namespace

// The rule: 16 warps; images a block such that the blocks give about 32 warps a multiprocessor
// (two blocks; LeNet-5 at 1024: 4 images a block); an image's data gradient in about `warps` /
// `imgs` units, so that every warp has one; fewer units, then fewer images, where the shared
// memory (the images or the buffers, then the items) would outgrow what a block may opt in to.
// Conv lab, H100, LeNet-5's conv2, fp32 (session 35): 16 warps against 8, 20.4 against 29.1 us at
// batch 64, 53.9 against 60.8 at 1024.
ArgmaxLayerPlan plan_layer_argmax(const CudaContext& ctx, const Conv2dShape& s,
                                  const ConvEpilogue& epi, bool want_dw, bool want_dx, int chunks,
                                  int threads) {
  ArgmaxLayerPlan p;
  const int pw = epi.pool_window, F = s.R;
  const bool fits = s.stride == 1 && s.R == s.S && (F == 3 || F == 5) && s.C * F <= 64 &&
                    epi.pool == PoolKind::Max && pw == epi.pool_stride && s.P() >= pw &&
                    s.Q() >= pw && s.N > 0 && (want_dw || want_dx);
  if (!fits) return p;
  p.want_dw = want_dw;
  p.want_dx = want_dx;
  p.taps = F;
  p.rounds = (s.C * F + 31) / 32;
  p.warps = threads > 0 ? std::clamp(threads / 32, 1, kMaxWarps) : kMaxWarps;
  choose_layout(s, F, p.stride, p.plane);
  const long long windows = (long long)(s.P() / pw) * (s.Q() / pw);
  const long long limit = std::min<long long>(kOptInSmemBytes, 4LL * ctx.smem_optin_floats());
  if (chunks > 0) {
    p.imgs = (s.N + chunks - 1) / chunks;
  } else {
    const long long blocks = (long long)ctx.sm_count() * (32 / p.warps);
    p.imgs = int((s.N + blocks - 1) / blocks);
  }
  const auto size = [&]() {
    p.kper = (s.K + p.kg - 1) / p.kg;
    p.kg = (s.K + p.kper - 1) / p.kper;
    const long long planes = (long long)p.imgs * std::max(want_dw ? 1 : 0, want_dx ? p.kg : 0);
    p.items_at = (planes * s.C * p.plane * 4 + 15) / 16 * 16;
    p.bytes = p.items_at + (long long)p.imgs * s.K * windows * 8;
  };
  for (;;) {
    p.kg = want_dx ? std::clamp((p.warps + p.imgs - 1) / p.imgs, 1, s.K) : 1;
    size();
    while (p.bytes > limit && p.kg > 1) {
      p.kg = (p.kg + 1) / 2;
      size();
    }
    if (p.bytes <= limit || p.imgs == 1) break;
    --p.imgs;
  }
  if (p.bytes > limit) return p;
  p.chunks = (s.N + p.imgs - 1) / p.imgs;
  // In clusters, a block keeps its chunk's row of weight sums in shared memory, where it fits.
  p.cluster = want_dw ? ctx.argmax_cluster(p.chunks) : 1;
  p.row_at = (p.bytes + 15) / 16 * 16;
  const long long with_row = p.row_at + 4LL * s.K * (s.C * F * F + 1);
  if (p.cluster > 1 && with_row <= limit)
    p.bytes = with_row;
  else
    p.cluster = 1;
  p.group = ctx.argmax_group(p.chunks / p.cluster);
  p.ok = !want_dw ||
         p.cluster * argmax_counters(p.chunks / p.cluster, p.group) <= int(CudaContext::kCounters);
  return p;
}

void run_layer_argmax(CudaContext& ctx, const ArgmaxLayerPlan& p, const Conv2dShape& s,
                      const DactSource& d, const ActIn& x, const float* w, const ActOut& dx,
                      float* dw, float* db) {
  const int pitch = (s.K * (s.C * s.R * s.S + 1) + 3) / 4 * 4;  // sum_rows4's float4 columns
  const LayerArgs a{p.imgs,
                    p.kg,
                    p.kper,
                    p.chunks,
                    p.group,
                    p.cluster,
                    p.stride,
                    p.plane,
                    pitch,
                    ctx.sum_loads(),
                    dact_format(d),
                    x ? fixed_format(x.prec) : kFmtAny,
                    p.want_dw,
                    p.want_dx,
                    p.items_at,
                    p.row_at};
  float* partial = nullptr;
  unsigned* counters = nullptr;
  if (p.want_dw) {
    // the chunks' rows and the groups', or the clusters' (pitch: nv floats) and the groups'
    const int rows = p.chunks / p.cluster, counted = argmax_counters(rows, p.group);
    partial = ctx.scratch(size_t(rows + counted - 1) * pitch);
    counters = ctx.counters(size_t(p.cluster * counted));
  }
  const auto run = p.taps == 3 ? (p.rounds == 1 ? launch_layer<3, 1> : launch_layer<3, 2>)
                                 : (p.rounds == 1 ? launch_layer<5, 1> : launch_layer<5, 2>);
  run(ctx, p, s, d, x, w, dx, partial, counters, dw, db, a);
}

}  // namespace pcnn::cuda
