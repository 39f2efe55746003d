// Reference kernels of the composite ops, written as direct loops in double (not through their
// decompositions, which are tested against these kernels).
#include <algorithm>
#include <cmath>
#include <numbers>
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

// xhat = (x - mean) / sqrt(var + eps) of one row (biased variance, as torch); returns
// 1 / sqrt(var + eps).
double normalize(const double* x, size_t width, double eps, double* xhat) {
  auto n = static_cast<double>(width);
  double mean = 0.0;
  for (size_t k = 0; k < width; ++k) mean += x[k];
  mean /= n;
  double var = 0.0;
  for (size_t k = 0; k < width; ++k) var += (x[k] - mean) * (x[k] - mean);
  double inv_std = 1.0 / std::sqrt(var / n + eps);
  for (size_t k = 0; k < width; ++k) xhat[k] = (x[k] - mean) * inv_std;
  return inv_std;
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
    normalize(values.data(), values.size(), eps, results.data());
    for (size_t k = 0; k < values.size(); ++k) results[k] = results[k] * gamma[k] + beta[k];
  });
}

// [dx | d gamma | d beta], row by row: dx = (g - mean(g) - xhat mean(g xhat)) * inv_std with
// g = dy * gamma; d gamma sums dy xhat and d beta sums dy over the rows.
Tensor kernel_layer_norm_grads(const Node& node, Operands operands) {
  std::vector<double> x = widen_all(node, operands[0]);
  std::vector<double> gamma = widen_all(node, operands[1]);
  std::vector<double> dy = widen_all(node, operands[2]);
  double eps = node.attr<LayerNormAttrs>().eps;
  size_t width = gamma.size();
  std::vector<double> grads(x.size() + 2 * width, 0.0), xhat(width), g(width);
  double* dgamma = grads.data() + x.size();
  double* dbeta = dgamma + width;
  for (size_t row = 0; width > 0 && row < x.size(); row += width) {
    double inv_std = normalize(&x[row], width, eps, xhat.data());
    double g_sum = 0.0, gx_sum = 0.0;
    for (size_t k = 0; k < width; ++k) {
      g[k] = dy[row + k] * gamma[k];
      g_sum += g[k];
      gx_sum += g[k] * xhat[k];
      dgamma[k] += dy[row + k] * xhat[k];
      dbeta[k] += dy[row + k];
    }
    auto n = static_cast<double>(width);
    for (size_t k = 0; k < width; ++k) {
      grads[row + k] = (g[k] - g_sum / n - xhat[k] * gx_sum / n) * inv_std;
    }
  }
  Tensor out(node.dtype, node.shape);
  narrow_all(node, grads, out);
  return out;
}

Tensor kernel_gelu_grad(const Node& node, Operands operands) {
  const Tensor& x = operands[0];
  const Tensor& dy = operands[1];
  Tensor out(x.dtype(), node.shape);
  visit_floating(node, x.dtype(), [&]<typename T>() {
    const T* in = x.data_as<T>();
    const T* grad = dy.data_as<T>();
    T* o = out.data_as<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) {
      double v = widen(in[i]);
      double cdf = 0.5 * (1.0 + std::erf(v / std::sqrt(2.0)));
      double pdf = std::exp(-0.5 * v * v) / std::sqrt(2.0 * std::numbers::pi);
      o[i] = narrow<T>(widen(grad[i]) * (cdf + v * pdf));
    }
  });
  return out;
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
