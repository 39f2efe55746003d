// Reference kernels of attention and its gradient, as direct loops in double over each batch
// index and query row (the decompositions and the CPU's fused kernels are tested against them).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/reference_kernels/kernel_util.h"
#include "kiln/reference_kernels/kernels.h"
#include "kiln/reference_kernels/typed.h"

namespace kiln::reference {
namespace {

// x of `shape` [..., A, B, D] as [..., B, A, D]: a seq_first operand heads_first, or back.
std::vector<double> swap_middle_dims(const std::vector<double>& x, const Shape& shape) {
  size_t rank = shape.size();
  int64_t a = shape[rank - 3], b = shape[rank - 2], d = shape[rank - 1];
  int64_t outer = shape_numel(shape) / (a * b * d);
  std::vector<double> swapped(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < a; ++i) {
      for (int64_t j = 0; j < b; ++j) {
        const double* from = x.data() + ((o * a + i) * b + j) * d;
        std::copy(from, from + d, swapped.data() + ((o * b + j) * a + i) * d);
      }
    }
  }
  return swapped;
}

bool seq_first(const Node& node) {
  return node.attr<AttentionAttrs>().layout == AttentionLayout::seq_first;
}

// An operand of `node` (q, k, v, out or dout) in double, heads_first.
std::vector<double> heads_first(const Node& node, const Tensor& x) {
  std::vector<double> wide = widen_all(node, x);
  return seq_first(node) ? swap_middle_dims(wide, x.shape()) : wide;
}

// Values computed heads_first for a value of `shape` in the node's layout, in that layout.
std::vector<double> in_node_layout(const Node& node, std::vector<double> values,
                                   const Shape& shape) {
  if (!seq_first(node)) return values;
  return swap_middle_dims(values, heads_first_shape(shape, AttentionLayout::seq_first));
}

// The operands of an attention or attention_grad node in double, with the probabilities and the
// dropout's scaled keep mask element by element.
class AttentionProblem {
 public:
  AttentionProblem(const Node& node, Operands operands)
      : attrs_(node.attr<AttentionAttrs>()),
        q_(heads_first(node, operands[0])),
        k_(heads_first(node, operands[1])),
        v_(heads_first(node, operands[2])),
        mask_(widen_all(node, operands[3])) {
    Shape q_shape = heads_first_shape(operands[0].shape(), attrs_.layout);
    size_t rank = q_shape.size();
    Shape batch_shape(q_shape.begin(), q_shape.end() - 2);
    batch = shape_numel(batch_shape);
    sq = q_shape[rank - 2];
    d = q_shape[rank - 1];
    sk = heads_first_shape(operands[1].shape(), attrs_.layout)[rank - 2];
    dv = operands[2].shape()[rank - 1];
    // The mask is read with stride 0 along its size-1 dims.
    const Shape& mask_shape = operands[3].shape();
    mask_strides_ = shape_strides(mask_shape);
    for (size_t i = 0; i < rank; ++i) {
      if (mask_shape[i] == 1) mask_strides_[i] = 0;
    }
    std::vector<int64_t> index(batch_shape.size(), 0);
    for (int64_t b = 0; b < batch; ++b, next_index(index, batch_shape)) {
      int64_t base = 0;
      for (size_t i = 0; i < index.size(); ++i) base += index[i] * mask_strides_[i];
      mask_base_.push_back(base);
    }
    if (attrs_.dropout_rate > 0.0) {
      Shape scores = batch_shape;
      scores.push_back(sq);
      scores.push_back(sk);
      bits_.resize(static_cast<size_t>(shape_numel(scores)));
      fill_random_bits(load_int(operands[operands.size() - 2], 0), operands.back(), attrs_.stream,
                       bits_.data(), scores);
      threshold_ = static_cast<uint32_t>(
          std::min(std::floor(attrs_.dropout_rate * 0x1p32), 0x1p32 - 1));
    }
  }

  int64_t batch = 1, sq = 0, sk = 0, d = 0, dv = 0;

  const double* q_row(int64_t b, int64_t i) const { return q_.data() + (b * sq + i) * d; }
  const double* k_row(int64_t b, int64_t j) const { return k_.data() + (b * sk + j) * d; }
  const double* v_row(int64_t b, int64_t j) const { return v_.data() + (b * sk + j) * dv; }
  double scale() const { return attrs_.scale; }

  // softmax(q k^T * scale + mask) of query row i of batch index b, before dropout.
  void probs(int64_t b, int64_t i, std::vector<double>& p) const {
    p.resize(static_cast<size_t>(sk));
    size_t rank = mask_strides_.size();
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < sk; ++j) {
      double dot = 0.0;
      for (int64_t e = 0; e < d; ++e) dot += q_row(b, i)[e] * k_row(b, j)[e];
      double bias = mask_[static_cast<size_t>(mask_base_[static_cast<size_t>(b)] +
                                              i * mask_strides_[rank - 2] +
                                              j * mask_strides_[rank - 1])];
      double score = dot * attrs_.scale + bias;
      p[static_cast<size_t>(j)] = score;
      if (std::isnan(score) || score > max) max = score;
    }
    double sum = 0.0;
    for (double& x : p) sum += (x = std::exp(x - max));
    for (double& x : p) x /= sum;
  }

  // What dropout multiplies element (b, i, j) of the probabilities by: 0 or 1 / (1 - rate).
  double keep_scale(int64_t b, int64_t i, int64_t j) const {
    if (bits_.empty()) return 1.0;
    bool keep = bits_[static_cast<size_t>((b * sq + i) * sk + j)] >= threshold_;
    return keep ? 1.0 / (1.0 - attrs_.dropout_rate) : 0.0;
  }

 private:
  AttentionAttrs attrs_;
  std::vector<double> q_, k_, v_, mask_;
  std::vector<int64_t> mask_strides_, mask_base_;
  std::vector<uint32_t> bits_;
  uint32_t threshold_ = 0;
};

}  // namespace

Tensor kernel_attention(const Node& node, Operands operands) {
  AttentionProblem a(node, operands);
  std::vector<double> out(static_cast<size_t>(shape_numel(node.shape)));
  std::vector<double> p;
  for (int64_t b = 0; b < a.batch; ++b) {
    for (int64_t i = 0; i < a.sq; ++i) {
      a.probs(b, i, p);
      // Each output element sums over the keys in order, as a per-element loop would.
      double* out_row = out.data() + (b * a.sq + i) * a.dv;
      for (int64_t j = 0; j < a.sk; ++j) {
        double weight = p[static_cast<size_t>(j)] * a.keep_scale(b, i, j);
        for (int64_t e = 0; e < a.dv; ++e) out_row[e] += weight * a.v_row(b, j)[e];
      }
    }
  }
  Tensor result(node.dtype, node.shape);
  narrow_all(node, in_node_layout(node, std::move(out), node.shape), result);
  return result;
}

// dV[j] = sum_i P Z[i, j] dO[i]; dP[i, j] = (dO[i] . V[j]) Z[i, j];
// dS[i, j] = P[i, j] (dP[i, j] - dO[i] . out[i]) * scale; dQ[i] = sum_j dS[i, j] K[j];
// dK[j] = sum_i dS[i, j] Q[i]. Written flat as [dq | dk | dv].
Tensor kernel_attention_grad(const Node& node, Operands operands) {
  AttentionProblem a(node, operands);
  std::vector<double> out = heads_first(node, operands[4]), dout = heads_first(node, operands[5]);
  int64_t q_size = a.batch * a.sq * a.d, k_size = a.batch * a.sk * a.d;
  std::vector<double> grads(static_cast<size_t>(shape_numel(node.shape)));
  double* dq = grads.data();
  double* dk = dq + q_size;
  double* dv = dk + k_size;
  std::vector<double> p;
  for (int64_t b = 0; b < a.batch; ++b) {
    for (int64_t i = 0; i < a.sq; ++i) {
      a.probs(b, i, p);
      const double* dout_row = dout.data() + (b * a.sq + i) * a.dv;
      const double* out_row = out.data() + (b * a.sq + i) * a.dv;
      double row_dot = 0.0;
      for (int64_t e = 0; e < a.dv; ++e) row_dot += dout_row[e] * out_row[e];
      for (int64_t j = 0; j < a.sk; ++j) {
        double keep = a.keep_scale(b, i, j), prob = p[static_cast<size_t>(j)];
        double dprob = 0.0;
        for (int64_t e = 0; e < a.dv; ++e) {
          dv[(b * a.sk + j) * a.dv + e] += prob * keep * dout_row[e];
          dprob += dout_row[e] * a.v_row(b, j)[e];
        }
        double dscore = prob * (dprob * keep - row_dot) * a.scale();
        for (int64_t e = 0; e < a.d; ++e) {
          dq[(b * a.sq + i) * a.d + e] += dscore * a.k_row(b, j)[e];
          dk[(b * a.sk + j) * a.d + e] += dscore * a.q_row(b, i)[e];
        }
      }
    }
  }
  std::vector<double> laid_out;  // dq, dk and dv, each in its operand's layout
  for (size_t i = 0, start = 0; i < 3; ++i) {
    auto size = static_cast<size_t>(operands[i].numel());
    std::vector<double> part(grads.data() + start, grads.data() + start + size);
    part = in_node_layout(node, std::move(part), operands[i].shape());
    laid_out.insert(laid_out.end(), part.begin(), part.end());
    start += size;
  }
  Tensor result(node.dtype, node.shape);
  narrow_all(node, laid_out, result);
  return result;
}

}  // namespace kiln::reference
