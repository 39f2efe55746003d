// Direct CPU kernels of the composites worth one pass over memory instead of their decomposition's
// chain of ops: softmax, log_softmax, layer_norm and cross_entropy (gelu and dropout are
// elementwise: loop kernels; attention has a file of its own). Values compute in float,
// sums of many terms (softmax denominators, layer-norm statistics, the loss) in double.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"
#include "kiln/backends/cpu/vector_math.h"

namespace kiln::cpu {
namespace {

// The lanes along `axis` of `shape`: lane (o, i) holds elements o * size * inner + k * inner + i.
struct Lanes {
  int64_t outer = 1, size = 1, inner = 1;
};

Lanes lanes_along(const Shape& shape, int64_t axis) {
  Lanes lanes;
  for (size_t d = 0; d < shape.size(); ++d) {
    auto dim = static_cast<int64_t>(d);
    (dim < axis ? lanes.outer : dim == axis ? lanes.size : lanes.inner) *= shape[d];
  }
  return lanes;
}

// One lane of softmax (log = false) or log_softmax: copied into `lane` in the compute type (so a
// strided lane is read once), then the max, the exponentials and their sum (in double), and the
// results. NaN propagates through the max, as in the reference.
template <typename T, typename C>
KILN_CPU_CLONES void softmax_lane(const T* in, T* out, int64_t size, int64_t stride, C* lane,
                                  bool log) {
  C max = -std::numeric_limits<C>::infinity();
  for (int64_t k = 0; k < size; ++k) {
    lane[k] = load(in[k * stride]);
    max = lane[k] != lane[k] || lane[k] > max ? lane[k] : max;
  }
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t k = 0; k < size; ++k) {
    C e = fast_exp(lane[k] - max);
    sum += static_cast<double>(e);
    lane[k] = log ? lane[k] : e;  // a select, not a branch: the loop vectorises
  }
  if (log) {
    auto lse = static_cast<C>(static_cast<double>(max) + std::log(sum));
    for (int64_t k = 0; k < size; ++k) out[k * stride] = store<T>(lane[k] - lse);
  } else {
    auto scale = static_cast<C>(1.0 / sum);
    for (int64_t k = 0; k < size; ++k) out[k * stride] = store<T>(lane[k] * scale);
  }
}

// softmax_lane for a contiguous lane, in vectorised passes: the maximum, the exponentials with
// partial sums per block in C (added up in double), the results. Separate loops for softmax and
// log_softmax: a select between the two keeps GCC from vectorising. A NaN anywhere makes every
// result NaN, as above, whichever partial maximum it lands in.
template <typename T, typename C>
KILN_CPU_CLONES void softmax_row(const T* in, T* out, int64_t size, C* lane, bool log) {
  C max = -std::numeric_limits<C>::infinity();
#pragma omp simd reduction(max : max)
  for (int64_t k = 0; k < size; ++k) {
    C value = load(in[k]);
    lane[k] = value;
    max = max > value ? max : value;
  }
  double sum = 0.0;
  constexpr int64_t kSumBlock = 512;
  for (int64_t start = 0; start < size; start += kSumBlock) {
    int64_t end = std::min(size, start + kSumBlock);
    C part = 0;
    if (log) {
#pragma omp simd reduction(+ : part)
      for (int64_t k = start; k < end; ++k) part += fast_exp(lane[k] - max);
    } else {
#pragma omp simd reduction(+ : part)
      for (int64_t k = start; k < end; ++k) {
        lane[k] = fast_exp(lane[k] - max);
        part += lane[k];
      }
    }
    sum += static_cast<double>(part);
  }
  if (log) {
    auto lse = static_cast<C>(static_cast<double>(max) + std::log(sum));
#pragma omp simd
    for (int64_t k = 0; k < size; ++k) out[k] = store<T>(lane[k] - lse);
  } else {
    auto scale = static_cast<C>(1.0 / sum);
#pragma omp simd
    for (int64_t k = 0; k < size; ++k) out[k] = store<T>(lane[k] * scale);
  }
}

template <typename T>
Kernel softmax_typed(const Graph& graph, int32_t id, bool log) {
  using C = Compute<T>;
  const Node& node = graph.node(id);
  int32_t x = node.inputs[0];
  Lanes l = lanes_along(node.shape, node.attr<SoftmaxAttrs>().axis);
  int64_t scratch = kernel_threads() * l.size * static_cast<int64_t>(sizeof(C));
  return {[=](const Buffers& buffers, std::byte* scratch_bytes) {
    const T* in = buffers.at<T>(x);
    T* out = buffers.at<T>(id);
    parallel_for(l.outer * l.inner, grain_for(l.size),
                 [&](int64_t begin, int64_t end) {
      C* lane = reinterpret_cast<C*>(scratch_bytes) + omp_get_thread_num() * l.size;
      for (int64_t item = begin; item < end; ++item) {
        int64_t base = item / l.inner * l.size * l.inner + item % l.inner;
        if (l.inner == 1) {
          softmax_row(in + base, out + base, l.size, lane, log);
        } else {
          softmax_lane(in + base, out + base, l.size, l.inner, lane, log);
        }
      }
    });
  }, scratch};
}

// One row: mean and biased variance (two passes, in double), then the affine normalisation.
template <typename T>
KILN_CPU_CLONES void layer_norm_row(const T* in, const T* gamma, const T* beta, T* out,
                                    int64_t width, double eps) {
  using C = Compute<T>;
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t k = 0; k < width; ++k) sum += static_cast<double>(load(in[k]));
  double mean = sum / static_cast<double>(width);
  double squares = 0.0;
#pragma omp simd reduction(+ : squares)
  for (int64_t k = 0; k < width; ++k) {
    double centered = static_cast<double>(load(in[k])) - mean;
    squares += centered * centered;
  }
  auto inv_std = static_cast<C>(1.0 / std::sqrt(squares / static_cast<double>(width) + eps));
  auto mean_c = static_cast<C>(mean);
  for (int64_t k = 0; k < width; ++k) {
    out[k] = store<T>((load(in[k]) - mean_c) * inv_std * load(gamma[k]) + load(beta[k]));
  }
}

template <typename T>
Kernel layer_norm_typed(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  int32_t x = node.inputs[0], gamma = node.inputs[1], beta = node.inputs[2];
  int64_t width = node.shape.empty() ? 1 : node.shape.back();
  int64_t rows = width == 0 ? 0 : shape_numel(node.shape) / width;
  double eps = node.attr<LayerNormAttrs>().eps;
  return {[=](const Buffers& buffers, std::byte*) {
    const T* in = buffers.at<T>(x);
    T* out = buffers.at<T>(id);
    parallel_for(rows, grain_for(width),
                 [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        layer_norm_row(in + r * width, buffers.at<T>(gamma), buffers.at<T>(beta), out + r * width,
                       width, eps);
      }
    });
  }};
}

// logsumexp(row) - row[label]: the exponentials in the compute type, their sum in double.
template <typename T>
KILN_CPU_CLONES double row_loss(const T* row, int64_t classes, int64_t label) {
  using C = Compute<T>;
  C max = -std::numeric_limits<C>::infinity();
  for (int64_t c = 0; c < classes; ++c) {
    C v = load(row[c]);
    max = v != v || v > max ? v : max;
  }
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < classes; ++c) sum += static_cast<double>(fast_exp(load(row[c]) - max));
  return static_cast<double>(max) + std::log(sum) - static_cast<double>(load(row[label]));
}

// Mean over rows whose label is not ignore_index of logsumexp(row) - row[label]; with every row
// ignored, 0/0 = NaN as in torch. Labels are checked before anything is computed; rows' losses
// go to scratch, then are summed in order.
template <typename T>
Kernel cross_entropy_typed(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  int32_t logits = node.inputs[0], labels = node.inputs[1];
  int64_t rows = graph.node(logits).shape[0], classes = graph.node(logits).shape[1];
  bool wide = graph.node(labels).dtype == DType::i64;
  int64_t ignore = node.attr<CrossEntropyAttrs>().ignore_index;
  int64_t scratch = rows * static_cast<int64_t>(sizeof(double));
  return {[=](const Buffers& buffers, std::byte* scratch_bytes) {
    auto label = [&](int64_t r) {
      return wide ? buffers.at<int64_t>(labels)[r] : buffers.at<int32_t>(labels)[r];
    };
    for (int64_t r = 0; r < rows; ++r) {
      int64_t l = label(r);
      check(l == ignore || (l >= 0 && l < classes), "cross_entropy", "label ", l, " of row ", r,
            " is outside [0, ", classes, ")");
    }
    const T* in = buffers.at<T>(logits);
    auto* losses = reinterpret_cast<double*>(scratch_bytes);
    parallel_for(rows, grain_for(classes), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t l = label(r);
        losses[r] = l == ignore ? 0.0 : row_loss(in + r * classes, classes, l);
      }
    });
    double total = 0.0;
    int64_t counted = 0;
    for (int64_t r = 0; r < rows; ++r) {
      if (label(r) == ignore) continue;
      total += losses[r];
      ++counted;
    }
    *buffers.at<T>(id) = store<T>(
        static_cast<Compute<T>>(total / static_cast<double>(std::max<int64_t>(counted, 1))));
  }, scratch};
}

}  // namespace

Kernel make_softmax(const Graph& graph, int32_t id) {
  return visit_floating("softmax", graph.node(id).dtype,
                        [&]<typename T>() { return softmax_typed<T>(graph, id, false); });
}

Kernel make_log_softmax(const Graph& graph, int32_t id) {
  return visit_floating("log_softmax", graph.node(id).dtype,
                        [&]<typename T>() { return softmax_typed<T>(graph, id, true); });
}

Kernel make_layer_norm(const Graph& graph, int32_t id) {
  return visit_floating("layer_norm", graph.node(id).dtype,
                        [&]<typename T>() { return layer_norm_typed<T>(graph, id); });
}

Kernel make_cross_entropy(const Graph& graph, int32_t id) {
  return visit_floating("cross_entropy", graph.node(id).dtype,
                        [&]<typename T>() { return cross_entropy_typed<T>(graph, id); });
}

}  // namespace kiln::cpu
