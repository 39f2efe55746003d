// Reference kernel of dot_general: both operands are first copied into canonical layouts
// lhs [batch, M, K] and rhs [batch, K, N] of compute values (double, or int64 for integers), then
// multiplied in i-k-j order into accumulator rows, so every inner loop is contiguous. Each output
// element sums its products in contracting-index order, accumulated in double (rounded once to
// the output dtype) or in wrapping int64: the same result as a plain triple loop.
#include <algorithm>

#include "kiln/reference_kernels/kernel_util.h"
#include "kiln/reference_kernels/kernels.h"
#include "kiln/reference_kernels/typed.h"

namespace kiln::reference {
namespace {

int64_t size_of(const Tensor& x, const Axes& dims) {
  int64_t size = 1;
  for (int64_t dim : dims) size *= x.shape()[static_cast<size_t>(dim)];
  return size;
}

// x's elements widened to C (double or int64), its dims reordered to `perm`, row-major.
template <typename C>
std::vector<C> permuted_values(const Node& node, const Tensor& x, const Axes& perm) {
  std::vector<int64_t> x_strides = shape_strides(x.shape());
  Shape shape;
  std::vector<int64_t> source_strides;
  for (int64_t dim : perm) {
    shape.push_back(x.shape()[static_cast<size_t>(dim)]);
    source_strides.push_back(x_strides[static_cast<size_t>(dim)]);
  }
  std::vector<C> values(static_cast<size_t>(x.numel()));
  auto copy = [&]<typename T>() {
    const T* in = x.data_as<T>();
    walk_rows(shape, shape_strides(shape), source_strides,
              [&](int64_t to, int64_t from, int64_t count, int64_t to_step, int64_t from_step) {
                for (int64_t j = 0; j < count; ++j) {
                  values[static_cast<size_t>(to + j * to_step)] = widen(in[from + j * from_step]);
                }
              });
  };
  if constexpr (std::same_as<C, double>) {
    visit_floating(node, x.dtype(), copy);
  } else {
    visit_integer(node, x.dtype(), copy);
  }
  return values;
}

inline double multiply_add(double acc, double x, double y) { return acc + x * y; }
inline int64_t multiply_add(int64_t acc, int64_t x, int64_t y) {
  return wrap_add(acc, wrap_mul(x, y));
}

// acc[j] += x * row[j] for four consecutive contracting steps in one pass, in the same order as
// four single passes (so the same rounding), with a quarter of the loads and stores of acc. The
// accumulators are a buffer of their own (__restrict) and x is read once: under the sanitizers,
// which kept GCC from proving that and reloaded x after every store to acc, this loop was 57%
// of CpuBenchShapes.Fp32StepMatchesReference, which took 198 -> 142 s (unchanged without them).
template <typename C>
void multiply_add_rows(C* __restrict acc, const C* __restrict x, const C* __restrict rows,
                       int64_t n) {
  const C* r0 = rows;
  const C* r1 = r0 + n;
  const C* r2 = r1 + n;
  const C* r3 = r2 + n;
  const C x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
  for (int64_t j = 0; j < n; ++j) {
    C sum = multiply_add(acc[j], x0, r0[j]);
    sum = multiply_add(sum, x1, r1[j]);
    sum = multiply_add(sum, x2, r2[j]);
    acc[j] = multiply_add(sum, x3, r3[j]);
  }
}

// Contracting steps per block (a multiple of 4): a block's rhs rows, about 256 KiB, stay in cache
// while every lhs row uses them.
int64_t contract_block(int64_t n) {
  return std::max<int64_t>(4, 32768 / std::max<int64_t>(n, 1) / 4 * 4);
}

// out[b, i, j] = sum over k of lhs[b, i, k] * rhs[b, k, j], narrowed to Out. The contracting dim is
// walked in blocks, in increasing order, so every element still sums its products in k order.
template <typename C, typename Out>
void multiply(const std::vector<C>& lhs, const std::vector<C>& rhs, int64_t batch, int64_t m,
              int64_t k, int64_t n, Out* out) {
  std::vector<C> acc(static_cast<size_t>(m * n));
  int64_t block = contract_block(n);
  for (int64_t b = 0; b < batch; ++b) {
    const C* lhs_matrix = lhs.data() + b * m * k;
    const C* rhs_matrix = rhs.data() + b * k * n;
    std::fill(acc.begin(), acc.end(), C{0});
    for (int64_t p0 = 0; p0 < k; p0 += block) {
      int64_t p_end = std::min(k, p0 + block);
      for (int64_t i = 0; i < m; ++i) {
        C* acc_row = acc.data() + i * n;
        const C* lhs_row = lhs_matrix + i * k;
        int64_t p = p0;
        for (; p + 4 <= p_end; p += 4) {
          multiply_add_rows(acc_row, lhs_row + p, rhs_matrix + p * n, n);
        }
        for (; p < p_end; ++p) {
          const C* rhs_row = rhs_matrix + p * n;
          const C x = lhs_row[p];
          for (int64_t j = 0; j < n; ++j) acc_row[j] = multiply_add(acc_row[j], x, rhs_row[j]);
        }
      }
    }
    Out* out_matrix = out + b * m * n;
    for (size_t e = 0; e < acc.size(); ++e) out_matrix[e] = narrow<Out>(acc[e]);
  }
}

}  // namespace

Tensor kernel_dot_general(const Node& node, Operands operands) {
  const Tensor& lhs = operands[0];
  const Tensor& rhs = operands[1];
  const DotAttrs& attrs = node.attr<DotAttrs>();
  Axes lhs_free = dot_free_dims(lhs.rank(), attrs.lhs_batch, attrs.lhs_contract);
  Axes rhs_free = dot_free_dims(rhs.rank(), attrs.rhs_batch, attrs.rhs_contract);
  int64_t batch = size_of(lhs, attrs.lhs_batch);
  int64_t m = size_of(lhs, lhs_free);
  int64_t k = size_of(lhs, attrs.lhs_contract);
  int64_t n = size_of(rhs, rhs_free);
  Axes lhs_perm = concat_axes(attrs.lhs_batch, lhs_free, attrs.lhs_contract);
  Axes rhs_perm = concat_axes(attrs.rhs_batch, attrs.rhs_contract, rhs_free);
  // Output dims are batch, lhs free, rhs free: exactly the row-major [batch, M, N].
  Tensor out(node.dtype, node.shape);
  if (is_floating(lhs.dtype())) {
    std::vector<double> a = permuted_values<double>(node, lhs, lhs_perm);
    std::vector<double> b = permuted_values<double>(node, rhs, rhs_perm);
    visit_floating(node, out.dtype(), [&]<typename Out>() {
      multiply(a, b, batch, m, k, n, out.data_as<Out>());
    });
  } else {
    std::vector<int64_t> a = permuted_values<int64_t>(node, lhs, lhs_perm);
    std::vector<int64_t> b = permuted_values<int64_t>(node, rhs, rhs_perm);
    visit_integer(node, out.dtype(), [&]<typename Out>() {
      multiply(a, b, batch, m, k, n, out.data_as<Out>());
    });
  }
  return out;
}

}  // namespace kiln::reference
