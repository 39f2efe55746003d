// Reference kernels of the composite ops, written as direct loops in double (not through their
// decompositions, which are tested against these kernels).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/backends/reference/kernel_util.h"
#include "kiln/backends/reference/kernels.h"
#include "kiln/ir/error.h"
#include "kiln/ir/philox.h"

namespace kiln::reference {
namespace {

void check_floating(const Node& node, const Tensor& x) {
  if (!is_floating(x.dtype())) fail_dtype(node, x.dtype());
}

// Calls lane(values, write) for every 1-D lane of x along `axis`: values holds the lane's
// elements and write(k, v) stores v at lane position k of the output.
template <typename Lane>
Tensor along_axis(const Node& node, const Tensor& x, int64_t axis, Lane lane) {
  check_floating(node, x);
  auto a = static_cast<size_t>(axis);
  int64_t outer = dims_product(x.shape(), 0, a);
  int64_t size = x.shape()[a];
  int64_t inner = dims_product(x.shape(), a + 1, x.shape().size());
  Tensor out(node.dtype, node.shape);
  std::vector<double> values(static_cast<size_t>(size));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      int64_t base = o * size * inner + in;
      for (int64_t k = 0; k < size; ++k) values[static_cast<size_t>(k)] = x.get(base + k * inner);
      lane(values, [&](int64_t k, double v) { out.set(base + k * inner, v); });
    }
  }
  return out;
}

double max_of(const std::vector<double>& values) {
  double max = -std::numeric_limits<double>::infinity();
  for (double v : values) max = std::isnan(v) || v > max ? v : max;
  return max;
}

// log(sum(exp(v))) computed as max + log(sum(exp(v - max))).
double log_sum_exp(const std::vector<double>& values) {
  double max = max_of(values);
  double sum = 0.0;
  for (double v : values) sum += std::exp(v - max);
  return max + std::log(sum);
}

}  // namespace

Tensor kernel_softmax(const Node& node, Operands operands) {
  int64_t axis = node.attr<SoftmaxAttrs>().axis;
  return along_axis(node, operands[0], axis, [](const auto& values, auto write) {
    double max = max_of(values);
    double sum = 0.0;
    for (double v : values) sum += std::exp(v - max);
    for (size_t k = 0; k < values.size(); ++k) {
      write(static_cast<int64_t>(k), std::exp(values[k] - max) / sum);
    }
  });
}

Tensor kernel_log_softmax(const Node& node, Operands operands) {
  int64_t axis = node.attr<SoftmaxAttrs>().axis;
  return along_axis(node, operands[0], axis, [](const auto& values, auto write) {
    double lse = log_sum_exp(values);
    for (size_t k = 0; k < values.size(); ++k) write(static_cast<int64_t>(k), values[k] - lse);
  });
}

Tensor kernel_layer_norm(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const Tensor& gamma = operands[1];
  const Tensor& beta = operands[2];
  double eps = node.attr<LayerNormAttrs>().eps;
  return along_axis(node, x, x.rank() - 1, [&](const auto& values, auto write) {
    auto n = static_cast<double>(values.size());
    double mean = 0.0;
    for (double v : values) mean += v;
    mean /= n;
    double var = 0.0;
    for (double v : values) var += (v - mean) * (v - mean);
    var /= n;
    double inv_std = 1.0 / std::sqrt(var + eps);
    for (size_t k = 0; k < values.size(); ++k) {
      auto kk = static_cast<int64_t>(k);
      write(kk, (values[k] - mean) * inv_std * gamma.get(kk) + beta.get(kk));
    }
  });
}

Tensor kernel_gelu(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  check_floating(node, x);
  Tensor out(node.dtype, node.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = x.get(i);
    out.set(i, v * 0.5 * (1.0 + std::erf(v / std::sqrt(2.0))));
  }
  return out;
}

// Mean over rows whose label is not ignore_index of logsumexp(row) - row[label]; with every row
// ignored the mean is 0/0 = NaN, as in torch.
Tensor kernel_cross_entropy(const Node& node, Operands operands) {
  const Tensor& logits = operands[0];
  const Tensor& labels = operands[1];
  check_floating(node, logits);
  int64_t ignore_index = node.attr<CrossEntropyAttrs>().ignore_index;
  int64_t rows = logits.shape()[0];
  int64_t classes = logits.shape()[1];
  double total = 0.0;
  int64_t counted = 0;
  std::vector<double> row(static_cast<size_t>(classes));
  for (int64_t n = 0; n < rows; ++n) {
    int64_t label = load_int(labels, n);
    if (label == ignore_index) continue;
    check(label >= 0 && label < classes, "cross_entropy", "label ", label, " of row ", n,
          " is outside [0, ", classes, ")");
    for (int64_t c = 0; c < classes; ++c) row[static_cast<size_t>(c)] = logits.get(n * classes + c);
    total += log_sum_exp(row) - row[static_cast<size_t>(label)];
    ++counted;
  }
  Tensor out(node.dtype, node.shape);
  out.set(0, total / static_cast<double>(counted));
  return out;
}

// For each batch index and query row: scores over the keys, softmax, then the weighted sum of
// the value rows. The mask is read with stride 0 along its size-1 dims.
Tensor kernel_attention(const Node& node, Operands operands) {
  const Tensor& q = operands[0];
  const Tensor& k = operands[1];
  const Tensor& v = operands[2];
  const Tensor& mask = operands[3];
  check_floating(node, q);
  double scale = node.attr<AttentionAttrs>().scale;
  size_t rank = q.shape().size();
  Shape batch_shape(q.shape().begin(), q.shape().end() - 2);
  for (const Tensor* t : {&k, &v}) {
    check(Shape(t->shape().begin(), t->shape().end() - 2) == batch_shape, "attention",
          "batch dims of q ", shape_str(q.shape()), " and ", shape_str(t->shape()), " differ");
  }
  int64_t sq = q.shape()[rank - 2], d = q.shape()[rank - 1];
  int64_t sk = k.shape()[rank - 2], dv = v.shape()[rank - 1];
  std::vector<int64_t> mask_strides = shape_strides(mask.shape());
  for (size_t i = 0; i < rank; ++i) {
    if (mask.shape()[i] == 1) mask_strides[i] = 0;
  }

  Tensor out(node.dtype, node.shape);
  std::vector<double> scores(static_cast<size_t>(sk));
  std::vector<int64_t> batch_index(batch_shape.size(), 0);
  for (int64_t b = 0; b < shape_numel(batch_shape); ++b, next_index(batch_index, batch_shape)) {
    int64_t mask_base = 0;
    for (size_t i = 0; i < batch_index.size(); ++i) mask_base += batch_index[i] * mask_strides[i];
    for (int64_t i = 0; i < sq; ++i) {
      for (int64_t j = 0; j < sk; ++j) {
        double dot = 0.0;
        for (int64_t e = 0; e < d; ++e) {
          dot += q.get((b * sq + i) * d + e) * k.get((b * sk + j) * d + e);
        }
        double bias = mask.get(mask_base + i * mask_strides[rank - 2] + j * mask_strides[rank - 1]);
        scores[static_cast<size_t>(j)] = dot * scale + bias;
      }
      double lse = log_sum_exp(scores);
      for (int64_t e = 0; e < dv; ++e) {
        double acc = 0.0;
        for (int64_t j = 0; j < sk; ++j) {
          acc += std::exp(scores[static_cast<size_t>(j)] - lse) * v.get((b * sk + j) * dv + e);
        }
        out.set((b * sq + i) * dv + e, acc);
      }
    }
  }
  return out;
}

// keep = bits >= threshold, threshold = min(floor(rate * 2^32), 2^32 - 1); kept values are
// scaled by 1 / (1 - rate), dropped ones are 0.
Tensor kernel_dropout(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  check_floating(node, x);
  const DropoutAttrs& attrs = node.attr<DropoutAttrs>();
  int64_t seed = load_int(operands[1], 0);
  int64_t offset = load_int(operands[2], 0);
  auto threshold = static_cast<uint32_t>(std::min(std::floor(attrs.rate * 0x1p32), 0x1p32 - 1));
  Tensor out(node.dtype, node.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    bool keep = random_bits_at(seed, offset, attrs.stream, i) >= threshold;
    out.set(i, keep ? x.get(i) / (1.0 - attrs.rate) : 0.0);
  }
  return out;
}

}  // namespace kiln::reference
