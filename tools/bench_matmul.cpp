// Times oneDNN's matmul alone at the GEMM shapes of a BERT-base training step at batch 16 x 128
// (2048 rows): the forward's projections, the backward's data gradients (the product with the
// weights) and weight gradients (a transposed lhs), each with the weights as stored and with them
// packed by oneDNN (the reorder's time included), and prints GFLOP/s, medians of 12 runs: the
// ceiling the CPU backend's products have inside a step (kernels_dot.cpp uses the same
// primitives). Operands stay in cache between runs, as they do not in a step.
//   bench_matmul [f32|bf16]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

namespace {

using dnnl::memory;

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A [rows x cols] matrix stored row-major, or transposed (column-major) when `transposed`.
memory::desc matrix(int64_t rows, int64_t cols, memory::data_type type, bool transposed) {
  return {{rows, cols}, type, transposed ? memory::dims{1, rows} : memory::dims{cols, 1}};
}

template <typename Run>
double median_seconds(dnnl::stream& stream, const Run& run) {
  std::vector<double> times;
  for (int i = 0; i < 12; ++i) {
    double start = seconds_now();
    run();
    stream.wait();
    times.push_back(seconds_now() - start);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Shape {
  const char* name;
  int64_t m, k, n;
  bool lhs_transposed, rhs_transposed;
};

}  // namespace

int main(int argc, char** argv) {
  std::string dtype = argc > 1 ? argv[1] : "f32";
  if (dtype != "f32" && dtype != "bf16") {
    std::fprintf(stderr, "usage: bench_matmul [f32|bf16]\n");
    return 2;
  }
  auto type = dtype == "f32" ? memory::data_type::f32 : memory::data_type::bf16;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const Shape shapes[] = {
      {"forward 768->768", 2048, 768, 768, false, true},
      {"forward 768->3072", 2048, 768, 3072, false, true},
      {"forward 3072->768", 2048, 3072, 768, false, true},
      {"data gradient 768", 2048, 768, 768, false, false},
      {"data gradient 3072->768", 2048, 3072, 768, false, false},
      {"weight gradient 768x768", 768, 2048, 768, true, false},
      {"weight gradient 768x3072", 768, 2048, 3072, true, false},
      {"weight gradient 3072x768", 3072, 2048, 768, true, false},
  };
  for (const Shape& s : shapes) {
    for (bool packed : {false, true}) {
      memory::desc lhs = matrix(s.m, s.k, type, s.lhs_transposed);
      memory::desc rhs = matrix(s.k, s.n, type, s.rhs_transposed);
      memory::desc weights = packed ? memory::desc({s.k, s.n}, type, memory::format_tag::any) : rhs;
      dnnl::matmul::primitive_desc pd(
          dnnl::matmul::desc(lhs, weights, matrix(s.m, s.n, memory::data_type::f32, false)),
          engine);
      dnnl::matmul matmul(pd);
      memory a(lhs, engine), b(rhs, engine), c(pd.dst_desc(), engine), w(pd.weights_desc(), engine);
      std::memset(a.get_data_handle(), 0, lhs.get_size());  // zeros: the time does not depend on
      std::memset(b.get_data_handle(), 0, rhs.get_size());  // the values
      dnnl::reorder pack(b, w);
      double reorder = packed ? median_seconds(stream, [&] { pack.execute(stream, b, w); }) : 0;
      double product = median_seconds(stream, [&] {
        matmul.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, packed ? w : b},
                                {DNNL_ARG_DST, c}});
      });
      double flop = 2.0 * static_cast<double>(s.m * s.k * s.n);
      std::printf("%s %-26s %5ldx%5ldx%5ld %-6s %7.2f ms %6.0f GFLOP/s (%s)\n", dtype.c_str(),
                  s.name, static_cast<long>(s.m), static_cast<long>(s.k), static_cast<long>(s.n),
                  packed ? "packed" : "plain", (product + reorder) * 1e3,
                  flop / (product + reorder) / 1e9, pd.impl_info_str());
    }
  }
}
