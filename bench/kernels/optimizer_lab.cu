// Kernel lab: the fused optimizer updates over a whole parameter arena, scalar vs float4, for
// LeNet-5's arena and a large one, on the op table's optimizer cases; checked against serial,
// GB/s from the bytes each element must move (SGD: p, g, v read, p, v written; Adam: p, g, m, v
// read, p, m, v written).
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
    for (size_t n : {size_t(61706), size_t(16) << 20, size_t(61706) + 3})
      for (Op op : {Op::sgd_update, Op::adam_update})
        for (auto entry : {std::pair{"scalar", cuda::OptVariant::Scalar},
                           std::pair{"float4", cuda::OptVariant::Vec4}}) {
          const OpCase c = test::optimizer_case(op, n, 1, true);
          const bool adam = op == Op::adam_update;
          const char* vname = entry.first;
          auto var = entry.second;
          // Odd n: every array one float past an aligned address, so float4 is impossible and
          // Auto must fall back (checked through the Auto path).
          const bool odd = n % 2 != 0;  // the 61709 case; 61706 (LeNet's arena) stays aligned
          if (odd && var == cuda::OptVariant::Vec4) var = cuda::OptVariant::Auto;
          std::vector<test::TensorSpec> specs = test::case_tensors(c);
          for (auto& t : specs)
            if (odd && t.name != "hyper" && t.name != "step") t = test::misaligned(t);
          const RunResult want = test::run_case(ref, c);
          DeviceTensors d(be, specs);
          auto launch = [&] {
            if (adam)
              cuda::adam_update(ctx, n, d.f("params"), d.f("grads"), d.f("m"), d.f("v"),
                                d.f("hyper"), d.i32("step"), var);
            else
              cuda::sgd_update(ctx, n, d.f("params"), d.f("grads"), d.f("velocity"), d.f("hyper"),
                               var);
          };
          launch();
          if (adam) be.increment(d.i32("step"));  // as the case's launch does
          const double err = check_outputs(c.label() + " " + vname, c, d, want,
                                           {1e-5, "one formula per element"});
          const double us = time_graph_us(be, launch);
          print_row(std::string(adam ? "adam n=" : "sgd n=") + std::to_string(n),
                    odd ? "auto (unaligned)" : vname, us, 0, c.bytes, err);
        }
    std::printf("\noptimizer_lab: %d failures\n", failures());
    return failures() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "optimizer_lab: %s\n", e.what());
    return 2;
  }
}
