// Kernel lab: the fused optimizer updates over a whole parameter arena, scalar vs float4, for
// LeNet-5's arena and a large one; checked against serial, GB/s from the bytes each element
// must move (SGD: p, g, v read, p, v written; Adam: p, g, m, v read, p, m, v written).
#include <string>

#include "backends/cuda/optimizer.cuh"
#include "bench/kernels/lab.hpp"

using namespace pcnn;
using namespace pcnn::lab;

int main() {
  try {
    CudaBackend be(0);
    SerialBackend ref;
    auto& ctx = be.context();
    print_device(be);
    print_header("optimizers");
    const std::vector<float> hyper = {0.01f, 0.9f, 1e-4f, 0.9f, 0.999f, 1e-8f};
    Buffer dh(be, hyper);
    int32_t* dstep = static_cast<int32_t*>(be.allocate(4));
    const int32_t step = 4;
    be.upload(dstep, &step, 4);
    for (size_t n : {size_t(61706), size_t(16) << 20, size_t(61706) + 3}) {
      const auto p = random_floats(n, 1), g = random_floats(n, 2), v = random_floats(n, 3, 0.f, 1.f);
      const auto m = random_floats(n, 4);
      for (bool adam : {false, true})
        for (auto entry : {std::pair{"scalar", cuda::OptVariant::Scalar},
                           std::pair{"float4", cuda::OptVariant::Vec4}}) {
          const char* vname = entry.first;
          auto var = entry.second;
          // Odd n: offset the arrays by one float, so float4 is impossible and Auto must fall
          // back (checked through the Auto path).
          const bool odd = n % 2 != 0;  // the 61709 case; 61706 (LeNet's arena) stays aligned
          if (odd && var == cuda::OptVariant::Vec4) var = cuda::OptVariant::Auto;
          Buffer bp(be, n + 1), bg(be, n + 1), bm(be, n + 1), bv(be, n + 1);
          float *pp = bp.get() + odd, *pg = bg.get() + odd, *pm = bm.get() + odd, *pv = bv.get() + odd;
          be.upload(pp, p.data(), n * 4);
          be.upload(pg, g.data(), n * 4);
          be.upload(pm, m.data(), n * 4);
          be.upload(pv, v.data(), n * 4);
          auto rp = p, rm = m, rv = v;
          if (adam) {
            ref.adam_update(n, rp.data(), g.data(), rm.data(), rv.data(), hyper.data(), &step);
            cuda::adam_update(ctx, n, pp, pg, pm, pv, dh.get(), dstep, var);
          } else {
            ref.sgd_update(n, rp.data(), g.data(), rv.data(), hyper.data());
            cuda::sgd_update(ctx, n, pp, pg, pv, dh.get(), var);
          }
          std::vector<float> gp(n), gv(n);
          be.download(gp.data(), pp, n * 4);
          be.download(gv.data(), pv, n * 4);
          const double err = std::max(rel_error(gp, rp), rel_error(gv, rv));
          if (err > 1e-5) ++failures();
          const double us = time_graph_us(be, [&] {
            if (adam) cuda::adam_update(ctx, n, pp, pg, pm, pv, dh.get(), dstep, var);
            else cuda::sgd_update(ctx, n, pp, pg, pv, dh.get(), var);
          });
          const double bytes = 4.0 * n * (adam ? 7 : 5);
          print_row(std::string(adam ? "adam n=" : "sgd n=") + std::to_string(n), odd ? "auto (unaligned)" : vname,
                    us, 0, bytes, err);
        }
    }
    be.deallocate(dstep);
    std::printf("\noptimizer_lab: %d failures\n", failures());
    return failures() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "optimizer_lab: %s\n", e.what());
    return 2;
  }
}
