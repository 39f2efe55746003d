// CPU kernels of reduce_sum and reduce_max. At compile time the reduced and kept dims are merged
// into [outer, reduced, inner]; other patterns are first transposed (in scratch) into
// [kept, reduced]. Floating sums accumulate in double: reductions are memory-bound, so the wider
// accumulator costs nothing and keeps long sums (bias gradients over batch x seq rows) within fp32
// tolerance of the reference. Max runs in the compute type and propagates NaN; integers wrap.
#include <algorithm>
#include <limits>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/strided_copy.h"
#include "kiln/backends/cpu/typed.h"

namespace kiln::cpu {
namespace {

constexpr int kLanes = 16;   // independent accumulators of a row fold, so that it vectorises
constexpr int64_t kChunk = 256;  // columns accumulated together when reducing over rows

struct ReduceShape {
  int64_t outer = 1, reduced = 1, inner = 1;
  bool needs_transpose = false;  // the input is first copied into [kept..., reduced...]
};

// Merges runs of kept and reduced dims (size-1 dims vanish) and matches [outer, reduced, inner].
ReduceShape reduce_shape(const Shape& shape, const Axes& axes) {
  std::vector<std::pair<int64_t, bool>> runs;  // (size, reduced)
  for (size_t d = 0; d < shape.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (shape[d] == 1) continue;
    if (!runs.empty() && runs.back().second == reduced) {
      runs.back().first *= shape[d];
    } else {
      runs.emplace_back(shape[d], reduced);
    }
  }
  ReduceShape out;
  size_t first_reduced = runs.size();
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].second && first_reduced == runs.size()) first_reduced = i;
  }
  if (first_reduced == runs.size()) {  // nothing (of size > 1) reduced
    out.outer = shape_numel(shape);
    return out;
  }
  if (first_reduced > 1 || runs.size() - first_reduced > 2) {
    out.needs_transpose = true;
    out.reduced = 1;
    for (const auto& [size, reduced] : runs) (reduced ? out.reduced : out.outer) *= size;
    return out;
  }
  if (first_reduced == 1) out.outer = runs[0].first;
  out.reduced = runs[first_reduced].first;
  if (first_reduced + 1 < runs.size()) out.inner = runs[first_reduced + 1].first;
  return out;
}

// The copy that puts the kept dims first, then the reduced ones.
StridedCopy kept_then_reduced(const Shape& shape, const Axes& axes, size_t element) {
  std::vector<int64_t> strides = shape_strides(shape);
  StridedCopy copy{{}, {}, {}, 0, 0, element};
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t d = 0; d < shape.size(); ++d) {
      bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
      if (reduced != (pass == 1)) continue;
      copy.shape.push_back(shape[d]);
      copy.src_strides.push_back(strides[d]);
    }
  }
  copy.dst_strides = shape_strides(copy.shape);
  return simplify(copy);
}

template <typename A, typename T, typename Op>
KILN_CPU_CLONES A fold_row(const T* x, int64_t n, A init, Op op) {
  A acc[kLanes];
  for (A& a : acc) a = init;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] = op(acc[l], static_cast<A>(load(x[i + l])));
  }
  for (; i < n; ++i) acc[0] = op(acc[0], static_cast<A>(load(x[i])));
  A result = acc[0];
  for (int l = 1; l < kLanes; ++l) result = op(result, acc[l]);
  return result;
}

// acc[j] = fold over k < rows of x[k * stride + j], for j < width.
template <typename A, typename T, typename Op>
KILN_CPU_CLONES void fold_columns(const T* x, int64_t rows, int64_t stride, int64_t width, A* acc,
                                  A init, Op op) {
  for (int64_t j = 0; j < width; ++j) acc[j] = init;
  for (int64_t k = 0; k < rows; ++k) {
    const T* row = x + k * stride;
    for (int64_t j = 0; j < width; ++j) acc[j] = op(acc[j], static_cast<A>(load(row[j])));
  }
}

// out[o, j] = fold over k of in[o, k, j].
template <typename A, typename T, typename Op>
void reduce_3d(const ReduceShape& s, const T* in, T* out, A init, Op op) {
  if (s.inner == 1) {
    parallel_for(s.outer, grain_for(s.reduced),
                 [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        out[o] = store<T>(fold_row<A>(in + o * s.reduced, s.reduced, init, op));
      }
    });
    return;
  }
  int64_t chunks = (s.inner + kChunk - 1) / kChunk;
  parallel_for(s.outer * chunks, grain_for(kChunk * s.reduced),
               [&](int64_t begin, int64_t end) {
    A acc[kChunk];
    for (int64_t item = begin; item < end; ++item) {
      int64_t o = item / chunks, j0 = item % chunks * kChunk;
      int64_t width = std::min(kChunk, s.inner - j0);
      fold_columns(in + o * s.reduced * s.inner + j0, s.reduced, s.inner, width, acc, init, op);
      T* to = out + o * s.inner + j0;
      for (int64_t j = 0; j < width; ++j) to[j] = store<T>(acc[j]);
    }
  });
}

template <typename A, typename T, typename Op>
Kernel reduce_kernel(const Graph& graph, int32_t id, A init, Op op) {
  const Node& node = graph.node(id);
  int32_t x = node.inputs[0];
  const Shape& shape = graph.node(x).shape;
  const Axes& axes = node.attr<ReduceAttrs>().axes;
  ReduceShape s = reduce_shape(shape, axes);
  int64_t scratch = s.needs_transpose ? shape_numel(shape) * static_cast<int64_t>(sizeof(T)) : 0;
  StridedCopy transpose = kept_then_reduced(shape, axes, sizeof(T));
  return {[=](const Buffers& buffers, std::byte* scratch_bytes) {
    const T* in = buffers.at<T>(x);
    if (s.needs_transpose) {
      run_copy(transpose, scratch_bytes, buffers.at<std::byte>(x));
      in = reinterpret_cast<const T*>(scratch_bytes);
    }
    reduce_3d<A>(s, in, buffers.at<T>(id), init, op);
  }, scratch};
}

template <typename C>
C nan_max(C acc, C v) {
  return v != v || v > acc ? v : acc;
}

}  // namespace

Kernel make_reduce_sum(const Graph& graph, int32_t id) {
  DType dtype = graph.node(id).dtype;
  return visit_numeric("reduce_sum", dtype, [&]<typename T>() {
    if constexpr (FloatStorage<T>) {
      return reduce_kernel<double, T>(graph, id, 0.0, [](double a, double b) { return a + b; });
    } else {
      return reduce_kernel<int64_t, T>(graph, id, int64_t{0}, [](int64_t a, int64_t b) {
        return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
      });
    }
  });
}

Kernel make_reduce_max(const Graph& graph, int32_t id) {
  DType dtype = graph.node(id).dtype;
  return visit_numeric("reduce_max", dtype, [&]<typename T>() {
    using C = Compute<T>;
    if constexpr (FloatStorage<T>) {
      return reduce_kernel<C, T>(graph, id, -std::numeric_limits<C>::infinity(), nan_max<C>);
    } else {
      auto lowest = static_cast<int64_t>(std::numeric_limits<T>::lowest());
      return reduce_kernel<int64_t, T>(graph, id, lowest, nan_max<int64_t>);
    }
  });
}

}  // namespace kiln::cpu
