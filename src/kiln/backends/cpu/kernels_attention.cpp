// Attention and its gradient as one fused kernel each, flash-attention style (Dao et al., 2022):
// blocks of queries against blocks of keys with an online softmax (running max and sum), so the
// [..., Sq, Sk] scores, probabilities and dropout mask never exist in memory; the dropout's bits
// are drawn block by block from the same Philox counters the dropout op reads.
//
// The backward kernel recomputes each query row's log-sum-exp (one more pass of q k^T over the
// keys) instead of taking it from the forward kernel: a node has one result, and giving the
// forward a second output (or packing [out | lse] into one, with lse in f32 next to a bf16 out)
// would cost a slice of every attention output in the model. The pass is 1 of the 8 block
// products of a training step's attention (forward 2, backward 6; the unfused graph has 6): at
// BERT-large's shape the fused forward + backward measured 1.13x the unfused one's CPU time in
// f32 (tools/bench_attention.cpp), with a third of its memory.
//
// Operands of storage type T compute in C = Compute<T> (f32 for f32, bf16 and f16; f64 for f64):
// bf16 values are exact in f32, so products of bf16 operands accumulated in f32 are what a bf16
// matmul computes, and the probabilities and score gradients are rounded to T before their
// products, as the unfused graph's bf16 dot_generals round their operands.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"
#include "kiln/backends/cpu/vector_math.h"

namespace kiln::cpu {
namespace {

// Queries per block and keys per block: a block's tiles (64 x 64 in f32: 16 KiB) stay in L1.
constexpr int64_t kBlock = 64;

// Element (r, k) of a [rows x inner] operand stored row-major with leading dim lda, or stored
// transposed ([inner x rows]) when kTransposed.
template <bool kTransposed, typename C>
inline __attribute__((always_inline)) C element(const C* a, int64_t lda, int64_t r, int64_t k) {
  return kTransposed ? a[k * lda + r] : a[r * lda + k];
}

// c[rows x cols] += a[rows x inner] b[inner x cols], one row of c at a time (the edges of
// gemm_accumulate).
template <bool kTransposed, typename C>
inline __attribute__((always_inline)) void gemm_rows(int64_t rows, int64_t inner, int64_t cols,
                                                     const C* a, int64_t lda, const C* b,
                                                     int64_t ldb, C* c, int64_t ldc) {
  for (int64_t r = 0; r < rows; ++r) {
    C* c_row = c + r * ldc;
    for (int64_t k = 0; k < inner; ++k) {
      C a_rk = element<kTransposed>(a, lda, r, k);
      const C* b_row = b + k * ldb;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) c_row[j] += a_rk * b_row[j];
    }
  }
}

// A kRows x kCols tile of c, kept in registers over the whole inner dimension.
constexpr int kRows = 4, kCols = 32;

template <bool kTransposed, typename C>
inline __attribute__((always_inline)) void gemm_tile(int64_t inner, const C* a, int64_t lda,
                                                     const C* b, int64_t ldb, C* c, int64_t ldc) {
  C acc[kRows][kCols];
  for (int r = 0; r < kRows; ++r) {
#pragma omp simd
    for (int j = 0; j < kCols; ++j) acc[r][j] = c[r * ldc + j];
  }
  for (int64_t k = 0; k < inner; ++k) {
    const C* b_row = b + k * ldb;
    for (int r = 0; r < kRows; ++r) {
      C a_rk = element<kTransposed>(a, lda, r, k);
#pragma omp simd
      for (int j = 0; j < kCols; ++j) acc[r][j] += a_rk * b_row[j];
    }
  }
  for (int r = 0; r < kRows; ++r) {
#pragma omp simd
    for (int j = 0; j < kCols; ++j) c[r * ldc + j] = acc[r][j];
  }
}

// c[rows x cols] += a[rows x inner] b[inner x cols], all row-major with leading dims lda, ldb,
// ldc (a stored transposed when kTransposed): every product of the kernels below. The one place
// to tune per instruction set (its clones are AVX-512, AVX2 and baseline builds of the same
// loops). 4 x 32 register tiles: on a 64 x 64 x 64 product, best of 200 runs on one core of the
// (busy) AVX-512 Xeon, about 160 GFLOP/s with AVX-512 and 74 with AVX2, against 48 and 35 for the
// row-at-a-time loop; a 4 x 64 tile gives 185 with AVX-512 but spills AVX2's 16 registers (63).
template <bool kTransposed = false, typename C>
KILN_CPU_CLONES void gemm_accumulate(int64_t rows, int64_t inner, int64_t cols, const C* a,
                                     int64_t lda, const C* b, int64_t ldb, C* c, int64_t ldc) {
  int64_t r = 0;
  for (; r + kRows <= rows; r += kRows) {
    const C* a_rows = kTransposed ? a + r : a + r * lda;
    int64_t j = 0;
    for (; j + kCols <= cols; j += kCols) {
      gemm_tile<kTransposed>(inner, a_rows, lda, b + j, ldb, c + r * ldc + j, ldc);
    }
    gemm_rows<kTransposed>(kRows, inner, cols - j, a_rows, lda, b + j, ldb, c + r * ldc + j, ldc);
  }
  gemm_rows<kTransposed>(rows - r, inner, cols, kTransposed ? a + r : a + r * lda, lda, b, ldb,
                         c + r * ldc, ldc);
}

// x rounded to the storage type T and back (the identity when T is the compute type).
template <typename T, typename C>
C round_to(C x) {
  if constexpr (HalfStorage<T>) {
    return load(store<T>(x));
  } else {
    return x;
  }
}

// Reads `count` elements of a floating buffer, `stride` apart from element `start`, as C: the
// mask and the forward output may have a dtype of their own.
template <typename C>
using RowLoader = void (*)(const std::byte* data, int64_t start, int64_t stride, int64_t count,
                           C* dst);

template <typename S, typename C>
void load_row(const std::byte* data, int64_t start, int64_t stride, int64_t count, C* dst) {
  const S* src = reinterpret_cast<const S*>(data) + start;
  for (int64_t k = 0; k < count; ++k) dst[k] = static_cast<C>(load(src[k * stride]));
}

template <typename C>
RowLoader<C> row_loader(DType dtype) {
  return visit_floating("attention", dtype, [&]<typename S>() { return &load_row<S, C>; });
}

// Copies rows [first, first + count) of a [rows x width] matrix of T into `dst` as C, transposed
// ([width x count], leading dim ld) when `transpose`.
template <typename T, typename C>
void pack_rows(const T* src, int64_t first, int64_t count, int64_t width, C* dst, bool transpose,
               int64_t ld) {
  for (int64_t r = 0; r < count; ++r) {
    const T* row = src + (first + r) * width;
    for (int64_t e = 0; e < width; ++e) {
      C value = load(row[e]);
      (transpose ? dst[e * ld + r] : dst[r * width + e]) = value;
    }
  }
}

// What an attention node computes, in index arithmetic fixed when the kernel is built: `heads`
// independent problems (the batch dims flattened) of sq queries and sk keys.
struct AttentionPlan {
  int64_t heads = 1, sq = 0, sk = 0, d = 0, dv = 0;
  double scale = 1.0;
  int32_t q = -1, k = -1, v = -1, mask = -1, seed = -1, offset = -1;
  // The mask: its offset per head, and its strides along queries and keys (0 where broadcast).
  std::vector<int64_t> mask_base;
  int64_t mask_row_stride = 0, mask_col_stride = 0;
  DType mask_dtype = DType::f32;
  // Dropout: the threshold on the bits; one offset key per `key_length` elements of the scores
  // (the dropout op's rule: a key per leading row of the scores, or one for all).
  double rate = 0.0;
  uint32_t stream = 0, threshold = 0;
  int64_t key_length = 1;

  AttentionPlan(const Graph& graph, const Node& node) {
    const auto& attrs = node.attr<AttentionAttrs>();
    q = node.inputs[0], k = node.inputs[1], v = node.inputs[2], mask = node.inputs[3];
    const Shape& q_shape = graph.node(q).shape;
    size_t rank = q_shape.size();
    Shape batch(q_shape.begin(), q_shape.end() - 2);
    heads = shape_numel(batch);
    sq = q_shape[rank - 2];
    d = q_shape[rank - 1];
    sk = graph.node(k).shape[rank - 2];
    dv = graph.node(v).shape[rank - 1];
    scale = attrs.scale;

    const Shape& mask_shape = graph.node(mask).shape;
    mask_dtype = graph.node(mask).dtype;
    std::vector<int64_t> strides = shape_strides(mask_shape);
    for (size_t i = 0; i < rank; ++i) {
      if (mask_shape[i] == 1) strides[i] = 0;
    }
    mask_row_stride = strides[rank - 2];
    mask_col_stride = strides[rank - 1];
    std::vector<int64_t> index(batch.size(), 0);
    for (int64_t h = 0; h < heads; ++h) {
      int64_t base = 0;
      for (size_t i = 0; i < index.size(); ++i) base += index[i] * strides[i];
      mask_base.push_back(base);
      for (size_t i = index.size(); i-- > 0;) {  // next row-major index of the batch dims
        if (++index[i] < batch[i]) break;
        index[i] = 0;
      }
    }

    rate = attrs.dropout_rate;
    if (rate > 0.0) {
      stream = attrs.stream;
      threshold = static_cast<uint32_t>(std::min(std::floor(rate * 0x1p32), 0x1p32 - 1));
      seed = node.inputs[node.inputs.size() - 2];
      offset = node.inputs.back();
      const Shape& keys = graph.node(offset).shape;
      key_length = heads * sq * sk / (keys.empty() ? 1 : keys[0]);
    }
  }
};

// Per-thread scratch of the kernels, carved from one block of C.
template <typename C>
class Scratch {
 public:
  explicit Scratch(C* base) : next_(base) {}
  C* take(int64_t count) {
    C* block = next_;
    next_ += count;
    return block;
  }

 private:
  C* next_;
};

// The Philox words of `count` elements of one key's run from element `first` of it, into `words`
// (count + 8 words); returns the word of `first`.
const uint32_t* philox_run(const AttentionPlan& p, int64_t seed, int64_t key, int64_t first,
                           int64_t count, uint32_t* words) {
  int64_t block = first / 4, blocks = (first + count - 1) / 4 - block + 1;
  philox_blocks(seed, key, p.stream, block, blocks, words);
  return words + (first - block * 4);
}

// The Philox words of query rows [i0, i0 + rows) of head h over every key, as the dropout op
// draws them for the scores (element (h, i, j) is element (h sq + i) sk + j of their numbering).
// A head's rows are consecutive under one key, so one call (long enough for the vectorised
// Philox) covers the block; without batch dims each query row has a key of its own, and rows go
// one by one. `words` holds (rows + 1) * sk + 8 words; returns the word of (i0, key 0).
const uint32_t* dropout_bits(const AttentionPlan& p, const Buffers& buffers, int64_t h,
                             int64_t i0, int64_t rows, uint32_t* words) {
  int64_t seed = *buffers.at<int64_t>(p.seed);
  const int64_t* keys = buffers.at<int64_t>(p.offset);
  int64_t first = (h * p.sq + i0) * p.sk, count = rows * p.sk;
  if (first / p.key_length == (first + count - 1) / p.key_length) {
    return philox_run(p, seed, keys[first / p.key_length], first % p.key_length, count, words);
  }
  uint32_t* spare = words + count;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t row = first + r * p.sk;
    const uint32_t* bits =
        philox_run(p, seed, keys[row / p.key_length], row % p.key_length, p.sk, spare);
    std::copy(bits, bits + p.sk, words + r * p.sk);
  }
  return words;
}

// s[rows x kBlock] = (q_block k^T) * scale + mask for query rows [i0, i0 + rows) and keys
// [j0, j0 + cols) of head h; q_block [rows x d], k_t the head's keys transposed [d x ldk].
template <typename C>
void score_tile(const AttentionPlan& p, const std::byte* mask, RowLoader<C> load_mask, int64_t h,
                int64_t i0, int64_t rows, int64_t j0, int64_t cols, const C* q_block,
                const C* k_t, int64_t ldk, C* s, C* mask_row) {
  std::fill(s, s + rows * kBlock, C{0});
  gemm_accumulate(rows, p.d, cols, q_block, p.d, k_t, ldk, s, kBlock);
  auto scale = static_cast<C>(p.scale);
  for (int64_t r = 0; r < rows; ++r) {
    load_mask(mask, p.mask_base[static_cast<size_t>(h)] + (i0 + r) * p.mask_row_stride +
                        j0 * p.mask_col_stride,
              p.mask_col_stride, cols, mask_row);
    C* s_row = s + r * kBlock;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) s_row[j] = s_row[j] * scale + mask_row[j];
  }
}

// One row of a score tile through the online softmax: raises the running maximum `max` to cover
// s[0, cols), replaces s by exp(s - max) and adds their sum to `sum` (rescaled to the new maximum).
// Returns the rescaling exp(old max - new max) for what was accumulated before. A NaN score makes
// the row's sum, and so its results, NaN.
template <typename C>
KILN_CPU_CLONES C online_softmax_row(C* s, int64_t cols, C& max, C& sum) {
  C block_max = max;
#pragma omp simd reduction(max : block_max)
  for (int64_t j = 0; j < cols; ++j) block_max = block_max > s[j] ? block_max : s[j];
  C rescale = fast_exp(max - block_max);
  C block_sum = 0;
#pragma omp simd reduction(+ : block_sum)
  for (int64_t j = 0; j < cols; ++j) {
    s[j] = fast_exp(s[j] - block_max);
    block_sum += s[j];
  }
  sum = sum * rescale + block_sum;
  max = block_max;
  return rescale;
}

// The forward's weights of one row for the product with v: exp(s - max), dropped where the row's
// Philox bits are below the threshold and scaled by `kept` elsewhere (no dropout when bits is
// null), rounded to T; and the row's accumulated output rescaled.
template <typename T, typename C>
KILN_CPU_CLONES void forward_weights_row(C* p, const uint32_t* bits, uint32_t threshold, C kept,
                                         int64_t cols, C* acc, int64_t dv, C rescale) {
#pragma omp simd
  for (int64_t e = 0; e < dv; ++e) acc[e] *= rescale;
  if (bits == nullptr) {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) p[j] = round_to<T>(p[j]);
  } else {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) p[j] = round_to<T>(bits[j] >= threshold ? p[j] * kept : 0);
  }
}

// The backward's row: from scores s and dp = dO V^T, with Z the dropout's multipliers (as above),
// the dropped probabilities P Z (into s, for dV) and dS = P (dp Z - row_dot) scale (into dp, for
// dQ and dK), both rounded to T.
template <typename T, typename C>
KILN_CPU_CLONES void backward_row(C* s, C* dp, const uint32_t* bits, uint32_t threshold, C kept,
                                  int64_t cols, C lse, C row_dot, C scale) {
  if (bits == nullptr) {  // separate loops: a load that may not happen keeps GCC from vectorising
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) {
      C prob = fast_exp(s[j] - lse);
      s[j] = round_to<T>(prob);
      dp[j] = round_to<T>(prob * (dp[j] - row_dot) * scale);
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) {
      C prob = fast_exp(s[j] - lse);
      C keep = bits[j] >= threshold ? kept : C{0};
      s[j] = round_to<T>(prob * keep);
      dp[j] = round_to<T>(prob * (dp[j] * keep - row_dot) * scale);
    }
  }
}

// Forward: one item per (head, query block); each keeps a running max m, a running sum l of
// exp(s - m) and the output rows scaled by exp(-m), rescaled when a key block raises m.
template <typename T, typename R>
Kernel attention_typed(const Graph& graph, int32_t id) {
  using C = Compute<T>;
  AttentionPlan p(graph, graph.node(id));
  RowLoader<C> load_mask = row_loader<C>(p.mask_dtype);
  int64_t q_blocks = (p.sq + kBlock - 1) / kBlock;
  // q block, k^T block, v block, scores, output rows, mask row, max, sum; the dropout's words.
  int64_t per_thread = kBlock * (p.d + p.d + p.dv + kBlock + p.dv + 3);
  int64_t words = p.rate > 0.0 ? (kBlock + 1) * p.sk + 8 : 0;
  auto kept = static_cast<C>(1.0 / (1.0 - p.rate));
  int64_t thread_bytes = per_thread * static_cast<int64_t>(sizeof(C)) + words * 4;
  return {[=](const Buffers& buffers, std::byte* scratch_bytes) {
    const T* q = buffers.at<T>(p.q);
    const T* k = buffers.at<T>(p.k);
    const T* v = buffers.at<T>(p.v);
    const std::byte* mask = buffers.at<std::byte>(p.mask);
    R* out = buffers.at<R>(id);
    parallel_for(p.heads * q_blocks, 1, [&](int64_t begin, int64_t end) {
      std::byte* mine = scratch_bytes + omp_get_thread_num() * thread_bytes;
      Scratch<C> scratch(reinterpret_cast<C*>(mine));
      C* q_block = scratch.take(kBlock * p.d);
      C* k_t = scratch.take(p.d * kBlock);
      C* v_block = scratch.take(kBlock * p.dv);
      C* s = scratch.take(kBlock * kBlock);
      C* acc = scratch.take(kBlock * p.dv);
      C* mask_row = scratch.take(kBlock);
      C* row_max = scratch.take(kBlock);
      C* row_sum = scratch.take(kBlock);
      auto* words_mine = reinterpret_cast<uint32_t*>(scratch.take(0));
      for (int64_t item = begin; item < end; ++item) {
        int64_t h = item / q_blocks, i0 = item % q_blocks * kBlock;
        int64_t rows = std::min(kBlock, p.sq - i0);
        pack_rows(q + h * p.sq * p.d, i0, rows, p.d, q_block, false, 0);
        std::fill(acc, acc + rows * p.dv, C{0});
        std::fill(row_max, row_max + rows, -std::numeric_limits<C>::infinity());
        std::fill(row_sum, row_sum + rows, C{0});
        const uint32_t* bits =
            p.rate > 0.0 ? dropout_bits(p, buffers, h, i0, rows, words_mine) : nullptr;
        for (int64_t j0 = 0; j0 < p.sk; j0 += kBlock) {
          int64_t cols = std::min(kBlock, p.sk - j0);
          pack_rows(k + h * p.sk * p.d, j0, cols, p.d, k_t, true, kBlock);
          pack_rows(v + h * p.sk * p.dv, j0, cols, p.dv, v_block, false, 0);
          score_tile(p, mask, load_mask, h, i0, rows, j0, cols, q_block, k_t, kBlock, s,
                     mask_row);
          for (int64_t r = 0; r < rows; ++r) {
            C* s_row = s + r * kBlock;
            C rescale = online_softmax_row(s_row, cols, row_max[r], row_sum[r]);
            forward_weights_row<T>(s_row, bits ? bits + r * p.sk + j0 : nullptr, p.threshold,
                                   kept, cols, acc + r * p.dv, p.dv, rescale);
          }
          gemm_accumulate(rows, cols, p.dv, s, kBlock, v_block, p.dv, acc, p.dv);
        }
        R* out_block = out + (h * p.sq + i0) * p.dv;
        for (int64_t r = 0; r < rows; ++r) {
          C inverse = C{1} / row_sum[r];
          for (int64_t e = 0; e < p.dv; ++e) {
            out_block[r * p.dv + e] = store<R>(acc[r * p.dv + e] * inverse);
          }
        }
      }
    });
  }, kernel_threads() * thread_bytes};
}

// Backward: one item per head (its dk and dv sum over every query block). Per query block:
// row_dot = rowsum(dO out); pass 1 recomputes each row's log-sum-exp; pass 2, per key block,
// P = exp(s - lse), dV += (P Z)^T dO, dP = (dO V^T) Z, dS = P (dP - row_dot) scale,
// dQ += dS K, dK += dS^T Q.
template <typename T, typename R>
Kernel attention_grad_typed(const Graph& graph, int32_t id) {
  using C = Compute<T>;
  const Node& node = graph.node(id);
  AttentionPlan p(graph, node);
  int32_t out_id = node.inputs[4], dout_id = node.inputs[5];
  RowLoader<C> load_mask = row_loader<C>(p.mask_dtype);
  RowLoader<C> load_out = row_loader<C>(graph.node(out_id).dtype);
  int64_t head = p.sk * (p.d + p.d + p.dv + p.d + p.dv);  // k^T, k, v^T, dk, dv
  int64_t block = kBlock * (p.d + p.dv + p.d + p.dv + 2 * kBlock + 4);
  int64_t words = p.rate > 0.0 ? (kBlock + 1) * p.sk + 8 : 0;
  auto kept = static_cast<C>(1.0 / (1.0 - p.rate));
  int64_t thread_bytes = (head + block) * static_cast<int64_t>(sizeof(C)) + words * 4;
  return {[=](const Buffers& buffers, std::byte* scratch_bytes) {
    const T* q = buffers.at<T>(p.q);
    const T* k = buffers.at<T>(p.k);
    const T* v = buffers.at<T>(p.v);
    const T* dout = buffers.at<T>(dout_id);
    const std::byte* mask = buffers.at<std::byte>(p.mask);
    const std::byte* out = buffers.at<std::byte>(out_id);
    R* dq = buffers.at<R>(id);
    R* dk = dq + p.heads * p.sq * p.d;
    R* dv = dk + p.heads * p.sk * p.d;
    parallel_for(p.heads, 1, [&](int64_t begin, int64_t end) {
      std::byte* mine = scratch_bytes + omp_get_thread_num() * thread_bytes;
      Scratch<C> scratch(reinterpret_cast<C*>(mine));
      C* k_t = scratch.take(p.d * p.sk);
      C* k_rows = scratch.take(p.sk * p.d);
      C* v_t = scratch.take(p.dv * p.sk);
      C* dk_acc = scratch.take(p.sk * p.d);
      C* dv_acc = scratch.take(p.sk * p.dv);
      C* q_block = scratch.take(kBlock * p.d);
      C* dout_block = scratch.take(kBlock * p.dv);
      C* dq_acc = scratch.take(kBlock * p.d);
      C* out_row = scratch.take(kBlock * p.dv);
      C* s = scratch.take(kBlock * kBlock);
      C* dprobs = scratch.take(kBlock * kBlock);
      C* lse = scratch.take(kBlock);
      C* row_dot = scratch.take(kBlock);
      C* mask_row = scratch.take(kBlock);
      C* row_sum = scratch.take(kBlock);
      auto* words_mine = reinterpret_cast<uint32_t*>(scratch.take(0));
      auto scale = static_cast<C>(p.scale);
      for (int64_t h = begin; h < end; ++h) {
        pack_rows(k + h * p.sk * p.d, 0, p.sk, p.d, k_t, true, p.sk);
        pack_rows(k + h * p.sk * p.d, 0, p.sk, p.d, k_rows, false, 0);
        pack_rows(v + h * p.sk * p.dv, 0, p.sk, p.dv, v_t, true, p.sk);
        std::fill(dk_acc, dk_acc + p.sk * p.d, C{0});
        std::fill(dv_acc, dv_acc + p.sk * p.dv, C{0});
        for (int64_t i0 = 0; i0 < p.sq; i0 += kBlock) {
          int64_t rows = std::min(kBlock, p.sq - i0);
          pack_rows(q + h * p.sq * p.d, i0, rows, p.d, q_block, false, 0);
          pack_rows(dout + h * p.sq * p.dv, i0, rows, p.dv, dout_block, false, 0);
          std::fill(dq_acc, dq_acc + rows * p.d, C{0});
          for (int64_t r = 0; r < rows; ++r) {
            load_out(out, (h * p.sq + i0 + r) * p.dv, 1, p.dv, out_row);
            C dot = 0;
            for (int64_t e = 0; e < p.dv; ++e) dot += dout_block[r * p.dv + e] * out_row[e];
            row_dot[r] = dot;
          }
          // Pass 1: each row's log-sum-exp, online over the key blocks (lse holds the running max).
          std::fill(lse, lse + rows, -std::numeric_limits<C>::infinity());
          std::fill(row_sum, row_sum + rows, C{0});
          for (int64_t j0 = 0; j0 < p.sk; j0 += kBlock) {
            int64_t cols = std::min(kBlock, p.sk - j0);
            score_tile(p, mask, load_mask, h, i0, rows, j0, cols, q_block, k_t + j0, p.sk, s,
                       mask_row);
            for (int64_t r = 0; r < rows; ++r) {
              online_softmax_row(s + r * kBlock, cols, lse[r], row_sum[r]);
            }
          }
          for (int64_t r = 0; r < rows; ++r) lse[r] += std::log(row_sum[r]);
          // Pass 2: the gradients, key block by key block.
          const uint32_t* bits =
              p.rate > 0.0 ? dropout_bits(p, buffers, h, i0, rows, words_mine) : nullptr;
          for (int64_t j0 = 0; j0 < p.sk; j0 += kBlock) {
            int64_t cols = std::min(kBlock, p.sk - j0);
            score_tile(p, mask, load_mask, h, i0, rows, j0, cols, q_block, k_t + j0, p.sk, s,
                       mask_row);
            std::fill(dprobs, dprobs + rows * kBlock, C{0});
            gemm_accumulate(rows, p.dv, cols, dout_block, p.dv, v_t + j0, p.sk, dprobs, kBlock);
            for (int64_t r = 0; r < rows; ++r) {
              backward_row<T>(s + r * kBlock, dprobs + r * kBlock,
                              bits ? bits + r * p.sk + j0 : nullptr, p.threshold, kept, cols,
                              lse[r], row_dot[r], scale);
            }
            gemm_accumulate<true>(cols, rows, p.dv, s, kBlock, dout_block, p.dv,
                                  dv_acc + j0 * p.dv, p.dv);
            gemm_accumulate(rows, cols, p.d, dprobs, kBlock, k_rows + j0 * p.d, p.d, dq_acc,
                            p.d);
            gemm_accumulate<true>(cols, rows, p.d, dprobs, kBlock, q_block, p.d,
                                  dk_acc + j0 * p.d, p.d);
          }
          R* dq_block = dq + (h * p.sq + i0) * p.d;
          for (int64_t i = 0; i < rows * p.d; ++i) dq_block[i] = store<R>(dq_acc[i]);
        }
        for (int64_t i = 0; i < p.sk * p.d; ++i) dk[h * p.sk * p.d + i] = store<R>(dk_acc[i]);
        for (int64_t i = 0; i < p.sk * p.dv; ++i) dv[h * p.sk * p.dv + i] = store<R>(dv_acc[i]);
      }
    });
  }, kernel_threads() * thread_bytes};
}

// Instantiates make<T, R> for the operands' storage type T and the result's R (T itself, or f32
// for half operands accumulated in f32).
template <typename Make>
Kernel visit_attention(const Graph& graph, int32_t id, const char* where, Make make) {
  DType operands = graph.node(graph.node(id).inputs[0]).dtype, result = graph.node(id).dtype;
  return visit_floating(where, operands, [&]<typename T>() {
    if (result == operands) return make.template operator()<T, T>();
    check(result == DType::f32, where, "the CPU kernel does not give ", dtype_name(result),
          " for ", dtype_name(operands), " operands");
    return make.template operator()<T, float>();
  });
}

}  // namespace

Kernel make_attention(const Graph& graph, int32_t id) {
  return visit_attention(graph, id, "attention", [&]<typename T, typename R>() {
    return attention_typed<T, R>(graph, id);
  });
}

Kernel make_attention_grad(const Graph& graph, int32_t id) {
  return visit_attention(graph, id, "attention_grad", [&]<typename T, typename R>() {
    return attention_grad_typed<T, R>(graph, id);
  });
}

}  // namespace kiln::cpu
