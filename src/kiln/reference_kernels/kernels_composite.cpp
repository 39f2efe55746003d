// Reference kernels of the composite ops, written as direct loops in double (not through their
// decompositions, which are tested against these kernels).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/reference_kernels/kernel_util.h"
#include "kiln/reference_kernels/kernels.h"
#include "kiln/reference_kernels/typed.h"
#include "kiln/ir/error.h"

namespace kiln::reference {
namespace {

using Lane = std::vector<double>;

// Calls lane(values, results) for every 1-D lane of x along `axis`: values holds the lane's
// elements in double, and the lane's results are rounded into the output at the same places.
template <typename LaneOp>
Tensor along_axis(const Node& node, const Tensor& x, int64_t axis, LaneOp lane) {
  auto a = static_cast<size_t>(axis);
  int64_t outer = dims_product(x.shape(), 0, a);
  int64_t size = x.shape()[a];
  int64_t inner = dims_product(x.shape(), a + 1, x.shape().size());
  Tensor out(x.dtype(), node.shape);
  Lane values(static_cast<size_t>(size)), results(static_cast<size_t>(size));
  visit_floating(node, x.dtype(), [&]<typename T>() {
    const T* in = x.data_as<T>();
    T* o = out.data_as<T>();
    for (int64_t outer_i = 0; outer_i < outer; ++outer_i) {
      for (int64_t inner_i = 0; inner_i < inner; ++inner_i) {
        int64_t base = outer_i * size * inner + inner_i;
        for (size_t k = 0; k < values.size(); ++k) {
          values[k] = widen(in[base + static_cast<int64_t>(k) * inner]);
        }
        lane(values, results);
        for (size_t k = 0; k < results.size(); ++k) {
          o[base + static_cast<int64_t>(k) * inner] = narrow<T>(results[k]);
        }
      }
    }
  });
  return out;
}

double max_of(const double* values, size_t count) {
  double max = -std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < count; ++k) {
    if (std::isnan(values[k]) || values[k] > max) max = values[k];
  }
  return max;
}

// log(sum(exp(v))) computed as max + log(sum(exp(v - max))).
double log_sum_exp(const double* values, size_t count) {
  double max = max_of(values, count);
  double sum = 0.0;
  for (size_t k = 0; k < count; ++k) sum += std::exp(values[k] - max);
  return max + std::log(sum);
}

}  // namespace

Tensor kernel_softmax(const Node& node, Operands operands) {
  int64_t axis = node.attr<SoftmaxAttrs>().axis;
  return along_axis(node, operands[0], axis, [](const Lane& values, Lane& results) {
    double max = max_of(values.data(), values.size());
    double sum = 0.0;
    for (size_t k = 0; k < values.size(); ++k) {
      results[k] = std::exp(values[k] - max);
      sum += results[k];
    }
    for (double& r : results) r /= sum;
  });
}

Tensor kernel_log_softmax(const Node& node, Operands operands) {
  int64_t axis = node.attr<SoftmaxAttrs>().axis;
  return along_axis(node, operands[0], axis, [](const Lane& values, Lane& results) {
    double lse = log_sum_exp(values.data(), values.size());
    for (size_t k = 0; k < values.size(); ++k) results[k] = values[k] - lse;
  });
}

Tensor kernel_layer_norm(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  std::vector<double> gamma = widen_all(node, operands[1]);
  std::vector<double> beta = widen_all(node, operands[2]);
  double eps = node.attr<LayerNormAttrs>().eps;
  return along_axis(node, x, x.rank() - 1, [&](const Lane& values, Lane& results) {
    auto n = static_cast<double>(values.size());
    double mean = 0.0;
    for (double v : values) mean += v;
    mean /= n;
    double var = 0.0;
    for (double v : values) var += (v - mean) * (v - mean);
    var /= n;
    double inv_std = 1.0 / std::sqrt(var + eps);
    for (size_t k = 0; k < values.size(); ++k) {
      results[k] = (values[k] - mean) * inv_std * gamma[k] + beta[k];
    }
  });
}

Tensor kernel_gelu(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  Tensor out(x.dtype(), node.shape);
  visit_floating(node, x.dtype(), [&]<typename T>() {
    const T* in = x.data_as<T>();
    T* o = out.data_as<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) {
      double v = widen(in[i]);
      o[i] = narrow<T>(v * 0.5 * (1.0 + std::erf(v / std::sqrt(2.0))));
    }
  });
  return out;
}

// Mean over rows whose label is not ignore_index of logsumexp(row) - row[label]; with every row
// ignored the mean is 0/0 = NaN, as in torch.
Tensor kernel_cross_entropy(const Node& node, Operands operands) {
  const Tensor& logits = operands[0];
  const Tensor& labels = operands[1];
  std::vector<double> values = widen_all(node, logits);
  int64_t ignore_index = node.attr<CrossEntropyAttrs>().ignore_index;
  int64_t rows = logits.shape()[0];
  int64_t classes = logits.shape()[1];
  double total = 0.0;
  int64_t counted = 0;
  for (int64_t n = 0; n < rows; ++n) {
    int64_t label = load_int(labels, n);
    if (label == ignore_index) continue;
    check(label >= 0 && label < classes, "cross_entropy", "label ", label, " of row ", n,
          " is outside [0, ", classes, ")");
    const double* row = values.data() + n * classes;
    total += log_sum_exp(row, static_cast<size_t>(classes)) - row[label];
    ++counted;
  }
  Tensor out(logits.dtype(), node.shape);
  // No counted label (an MLM batch where nothing was masked): 0, not 0/0.
  narrow_all(node, {total / static_cast<double>(std::max<int64_t>(counted, 1))}, out);
  return out;
}

// For each batch index and query row: scores over the keys, softmax, then the weighted sum of
// the value rows. The mask is read with stride 0 along its size-1 dims.
Tensor kernel_attention(const Node& node, Operands operands) {
  const Tensor& q_tensor = operands[0];
  const Tensor& k_tensor = operands[1];
  const Tensor& v_tensor = operands[2];
  const Tensor& mask_tensor = operands[3];
  double scale = node.attr<AttentionAttrs>().scale;
  size_t rank = q_tensor.shape().size();
  Shape batch_shape(q_tensor.shape().begin(), q_tensor.shape().end() - 2);
  for (const Tensor* t : {&k_tensor, &v_tensor}) {
    check(Shape(t->shape().begin(), t->shape().end() - 2) == batch_shape, "attention",
          "batch dims of q ", shape_str(q_tensor.shape()), " and ", shape_str(t->shape()),
          " differ");
  }
  int64_t sq = q_tensor.shape()[rank - 2], d = q_tensor.shape()[rank - 1];
  int64_t sk = k_tensor.shape()[rank - 2], dv = v_tensor.shape()[rank - 1];
  std::vector<int64_t> mask_strides = shape_strides(mask_tensor.shape());
  for (size_t i = 0; i < rank; ++i) {
    if (mask_tensor.shape()[i] == 1) mask_strides[i] = 0;
  }
  std::vector<double> q = widen_all(node, q_tensor), k = widen_all(node, k_tensor);
  std::vector<double> v = widen_all(node, v_tensor), mask = widen_all(node, mask_tensor);

  std::vector<double> out(static_cast<size_t>(shape_numel(node.shape)));
  std::vector<double> scores(static_cast<size_t>(sk));
  std::vector<int64_t> batch_index(batch_shape.size(), 0);
  for (int64_t b = 0; b < shape_numel(batch_shape); ++b, next_index(batch_index, batch_shape)) {
    int64_t mask_base = 0;
    for (size_t i = 0; i < batch_index.size(); ++i) mask_base += batch_index[i] * mask_strides[i];
    for (int64_t i = 0; i < sq; ++i) {
      const double* q_row = q.data() + (b * sq + i) * d;
      for (int64_t j = 0; j < sk; ++j) {
        const double* k_row = k.data() + (b * sk + j) * d;
        double dot = 0.0;
        for (int64_t e = 0; e < d; ++e) dot += q_row[e] * k_row[e];
        double bias = mask[static_cast<size_t>(mask_base + i * mask_strides[rank - 2] +
                                               j * mask_strides[rank - 1])];
        scores[static_cast<size_t>(j)] = dot * scale + bias;
      }
      double lse = log_sum_exp(scores.data(), scores.size());
      // Each output element sums over the keys in order, as a per-element loop would.
      double* out_row = out.data() + (b * sq + i) * dv;
      for (int64_t j = 0; j < sk; ++j) {
        double p = std::exp(scores[static_cast<size_t>(j)] - lse);
        const double* v_row = v.data() + (b * sk + j) * dv;
        for (int64_t e = 0; e < dv; ++e) out_row[e] += p * v_row[e];
      }
    }
  }
  Tensor result(q_tensor.dtype(), node.shape);
  narrow_all(node, out, result);
  return result;
}

// keep = bits >= threshold, threshold = min(floor(rate * 2^32), 2^32 - 1); kept values are
// scaled by 1 / (1 - rate), dropped ones are 0.
Tensor kernel_dropout(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const DropoutAttrs& attrs = node.attr<DropoutAttrs>();
  auto threshold = static_cast<uint32_t>(std::min(std::floor(attrs.rate * 0x1p32), 0x1p32 - 1));
  std::vector<uint32_t> bits(static_cast<size_t>(x.numel()));
  fill_random_bits(load_int(operands[1], 0), operands[2], attrs.stream, bits.data(), x.shape());
  Tensor out(x.dtype(), node.shape);
  visit_floating(node, x.dtype(), [&]<typename T>() {
    const T* in = x.data_as<T>();
    T* o = out.data_as<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) {
      bool keep = bits[static_cast<size_t>(i)] >= threshold;
      o[i] = narrow<T>(keep ? widen(in[i]) / (1.0 - attrs.rate) : 0.0);
    }
  });
  return out;
}

}  // namespace kiln::reference
