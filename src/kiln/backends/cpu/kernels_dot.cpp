// CPU kernels of dot_general and of gemm groups (a dot_general and its epilogue: bias, scaling,
// gelu, the add of a tensor, as oneDNN post-ops, and a last cast to bf16 as the destination's
// dtype). f32 x f32 -> f32 and bf16 x bf16 -> f32/bf16 go to a oneDNN matmul primitive made at
// compile time, reading each operand in place when its dims collapse to a strided
// [batch dims..., rows, cols] view (dot_layout.h) and copying it to that layout (in scratch)
// otherwise; the rhs is reordered into the blocked layout oneDNN's kernels prefer where that
// pays. Products of matrices read in place, with at most a bias or an added tensor after them,
// run on Kiln's own kernels instead where those win: bf16 x bf16 -> f32/bf16 where AMX is in use
// (amx_products.h), f32 x f32 -> f32 of the smaller configurations' sizes where the kernels use
// AVX2 (f32_products.h).
// Other dtypes (f64, f16, integers, mixed widths) use a plain loop over the copied operands.
#include <omp.h>

#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <string_view>

#include "kiln/backends/cpu/amx_products.h"
#include "kiln/backends/cpu/dot_layout.h"
#include "kiln/backends/cpu/f32_products.h"
#include "kiln/backends/cpu/isa_variants.h"
#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/strided_copy.h"
#include "kiln/backends/cpu/typed.h"
#include "kiln/backends/cpu/vector_math.h"

namespace kiln::cpu {
namespace {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& cpu_stream() {
  static dnnl::stream stream(cpu_engine());
  return stream;
}

std::optional<dnnl::memory::data_type> dnnl_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return dnnl::memory::data_type::f32;
    case DType::bf16: return dnnl::memory::data_type::bf16;
    default: return std::nullopt;
  }
}

// [batch dims..., rows, cols]: a plain matrix when the batch is 1 (the widest choice of
// implementations).
dnnl::memory::desc matrix_desc(const MatrixView& view, dnnl::memory::data_type type) {
  return {dnnl::memory::dims(view.sizes.begin(), view.sizes.end()), type,
          dnnl::memory::dims(view.strides.begin(), view.strides.end())};
}

// Scratch where needed: operand copies, the packed rhs, the loop's accumulators.
struct Scratch {
  int64_t lhs = -1, rhs = -1, packed = -1, accumulators = -1;  // byte offsets; -1: none
  int64_t bytes = 0;

  int64_t take(int64_t size) {
    int64_t offset = bytes;
    bytes += whole_lines(size);
    return offset;
  }
};

struct Operands {
  int32_t lhs, rhs, out;
  StridedCopy lhs_copy, rhs_copy;
};

// Points a and b at the operands, copying those that need it into scratch first.
void prepare(const Operands& o, const Scratch& s, const Buffers& buffers, std::byte* scratch,
             const std::byte*& a, const std::byte*& b) {
  a = buffers.at<std::byte>(o.lhs);
  b = buffers.at<std::byte>(o.rhs);
  if (s.lhs >= 0) {
    run_copy(o.lhs_copy, scratch + s.lhs, a);
    a = scratch + s.lhs;
  }
  if (s.rhs >= 0) {
    run_copy(o.rhs_copy, scratch + s.rhs, b);
    b = scratch + s.rhs;
  }
}

struct Matmul {
  dnnl::matmul::primitive_desc pd;
  bool packed;  // its weights layout differs from the rhs view: reorder the rhs first
};

// Whether to let oneDNN pick the weights (rhs) layout, blocked for its brgemm kernels, at the cost
// of one reorder of the rhs per run. Measured with oneDNN 2.6 on 2 AVX-512 (AMX) cores, GFLOP/s
// plain -> packed (medians of 15): plain rows of thousands of columns thrash the cache (f32
// 2048x3072x768 117 -> 298, 768x3072x2048 with the lhs transposed 98 -> 263); in f32, BERT-base's
// 768x768 weights gain too (2048x768x768 278 -> 322; transposed lhs 275 -> 292, and
// 3072x768x2048 260 -> 301). In bf16, small weights or few lhs rows lose to the reorder
// (128x128x512 861 -> 527, 2048x512x128 1685 -> 1558), and so does a transposed lhs whatever the
// size (the weight gradients: 768x3072x2048 1165 -> 901, 768x768x2048 1698 -> 1059). In f32 a
// transposed lhs gains only with a wide rhs: BERT-base's 768x2048x768 weight gradients in its
// step (ONEDNN_VERBOSE) took 7.44 ms packed plus 0.63 for the reorder, 7.28 plain (the base fp32
// step 3,770/3,842/3,756/3,656 -> 3,762/3,674/3,732/3,611 ms, alternated); 768x2048x3072 stays
// packed (61 ms plain against 34 packed, alone).
bool worth_packing(const DotLayout& layout, const MatrixView& lhs, dnnl::memory::data_type type) {
  if (layout.m < 512) return false;
  bool lhs_transposed = lhs.col_stride() != 1;
  if (type == dnnl::memory::data_type::f32) {
    return layout.k * layout.n >= (int64_t{1} << 19) && (!lhs_transposed || layout.n >= 2048);
  }
  return !lhs_transposed && layout.k * layout.n >= (int64_t{1} << 21);
}

// A oneDNN matmul on the given views, with packed weights first when `try_packed`, then plain;
// empty when oneDNN has no implementation, or only its slow reference one (then the caller tries
// dense copies).
std::optional<Matmul> matmul_desc(const MatrixView& lhs, const MatrixView& rhs,
                                  const MatrixView& out, dnnl::memory::data_type in_type,
                                  dnnl::memory::data_type out_type, bool try_packed,
                                  const dnnl::primitive_attr& attr,
                                  const dnnl::memory::desc& bias) {
  dnnl::memory::desc plain = matrix_desc(rhs, in_type);
  for (bool pack : {true, false}) {
    if (pack && !try_packed) continue;
    try {
      dnnl::memory::desc weights =
          pack ? dnnl::memory::desc(plain.dims(), in_type, dnnl::memory::format_tag::any) : plain;
      dnnl::matmul::desc desc(matrix_desc(lhs, in_type), weights, bias,
                              matrix_desc(out, out_type));
      dnnl::matmul::primitive_desc pd(desc, attr, cpu_engine());
      if (std::string_view(pd.impl_info_str()).starts_with("ref")) continue;
      return Matmul{pd, pd.weights_desc() != plain};
    } catch (const dnnl::error&) {
    }
  }
  return std::nullopt;
}

// The copy of a row-major rhs `view` into the packed weights layout `packed` when that is a 2-D
// layout of [block rows, block cols] blocks, block columns outermost (f32 brgemm's BA16a64b): one
// memcpy per block row, block by block. From a cold source (the weights in the backward pass, last
// touched by the previous step's optimizer) oneDNN's reorder moved 8-13 GB/s, this copy 14-17
// (2 AVX-512 cores, 1024x1024, 1024x4096 and 4096x1024, caches flushed before each run; the step
// of BERT-large MLM at seq 512 packs 7 such rhs a layer). Empty for any other layout (bf16's
// pairs of rows, padded blocks) and for a transposed rhs, where oneDNN's reorder is the faster
// (12-16 GB/s against 7-9 for run_copy's tiles): the reorder packs those.
std::optional<StridedCopy> block_copy(const MatrixView& view, const dnnl::memory::desc& packed,
                                      size_t element) {
  const dnnl_memory_desc_t& d = packed.data;
  if (view.sizes.size() != 2 || view.strides[1] != 1 || d.ndims != 2 ||
      d.format_kind != dnnl_blocked || d.offset0 != 0 || d.extra.flags != 0) {
    return std::nullopt;
  }
  const dnnl_blocking_desc_t& blocking = d.format_desc.blocking;
  if (blocking.inner_nblks != 2 || blocking.inner_idxs[0] != 0 || blocking.inner_idxs[1] != 1) {
    return std::nullopt;
  }
  int64_t rows = view.sizes[0], cols = view.sizes[1], ld = view.strides[0];
  int64_t block_rows = blocking.inner_blks[0], block_cols = blocking.inner_blks[1];
  if (rows % block_rows != 0 || cols % block_cols != 0) return std::nullopt;
  int64_t block = block_rows * block_cols, row_blocks = rows / block_rows;
  if (blocking.strides[0] != block || blocking.strides[1] != row_blocks * block) return std::nullopt;
  // [row block, column block, row in block, column in block]: each block written whole, in turn.
  StridedCopy copy{.shape = {row_blocks, cols / block_cols, block_rows, block_cols},
                   .dst_strides = {block, row_blocks * block, block_cols, 1},
                   .src_strides = {block_rows * ld, block_cols, ld, 1},
                   .element = element};
  return simplify(copy);
}

// Runs a primitive through the C API with an argument array built once (the C++ execute() builds
// a map per call).
void execute(const dnnl::primitive& primitive, const std::vector<dnnl_exec_arg_t>& args) {
  dnnl_status_t status = dnnl_primitive_execute(primitive.get(), cpu_stream().get(),
                                                static_cast<int>(args.size()), args.data());
  check(status == dnnl_success, "dot_general", "oneDNN failed (status ", static_cast<int>(status),
        ")");
}

// The epilogue of a gemm group as oneDNN post-ops, with the buffers its binary post-ops read. A
// bias added first is the matmul's own bias argument instead: the same sum, rounded once, and
// cheaper than a binary post-op (oneDNN 2.6, 2 AVX-512 cores, 2048 rows: 128 -> 128 0.19 ms with
// none, 0.23 as a binary add, 0.19 as the bias; 256 -> 256 0.75, 0.88, 0.81).
struct PostOps {
  dnnl::primitive_attr attr;
  int32_t bias = -1;              // the node whose buffer is the [n] bias; -1: none
  dnnl::memory::desc bias_desc;   // zero (no bias) when bias is -1
  std::vector<std::pair<int, int32_t>> tensors;  // (post-op index, node whose buffer is src1)
  std::vector<dnnl::memory::desc> descs;         // of those tensors
};

std::optional<Kernel> onednn_kernel(const DotLayout& layout, Operands o, DType in_dtype,
                                    DType out_dtype, const PostOps& post_ops) {
  auto in_type = dnnl_type(in_dtype);
  auto out_type = dnnl_type(out_dtype);
  if (!in_type || !out_type || (in_dtype == DType::f32 && out_dtype != DType::f32)) {
    return std::nullopt;
  }
  MatrixView out = dense_view(layout.batch_sizes, layout.m, layout.n);
  Scratch s;
  MatrixView lhs = layout.lhs_view.value_or(dense_view(layout.batch_sizes, layout.m, layout.k));
  MatrixView rhs = layout.rhs_view.value_or(dense_view(layout.batch_sizes, layout.k, layout.n));
  std::optional<Matmul> matmul;
  if (layout.lhs_view && layout.rhs_view) {
    matmul = matmul_desc(lhs, rhs, out, *in_type, *out_type,
                         worth_packing(layout, lhs, *in_type), post_ops.attr, post_ops.bias_desc);
  }
  if (!matmul) {  // copy what does not collapse, or everything when the views were too exotic
    bool copy_both = layout.lhs_view && layout.rhs_view;
    size_t element = dtype_size(in_dtype);
    if (copy_both || !layout.lhs_view) {
      lhs = dense_view(layout.batch_sizes, layout.m, layout.k);
      s.lhs = s.take(layout.batch * layout.m * layout.k * static_cast<int64_t>(element));
    }
    if (copy_both || !layout.rhs_view) {
      rhs = dense_view(layout.batch_sizes, layout.k, layout.n);
      s.rhs = s.take(layout.batch * layout.k * layout.n * static_cast<int64_t>(element));
    }
    matmul = matmul_desc(lhs, rhs, out, *in_type, *out_type,
                         worth_packing(layout, lhs, *in_type), post_ops.attr, post_ops.bias_desc);
    if (!matmul) return std::nullopt;
  }
  const dnnl::matmul::primitive_desc& pd = matmul->pd;
  dnnl::matmul primitive(pd);
  dnnl::memory src(pd.src_desc(), cpu_engine(), DNNL_MEMORY_NONE);
  dnnl::memory weights(pd.weights_desc(), cpu_engine(), DNNL_MEMORY_NONE);
  dnnl::memory dst(pd.dst_desc(), cpu_engine(), DNNL_MEMORY_NONE);
  std::vector<dnnl_exec_arg_t> args = {
      {DNNL_ARG_SRC, src.get()}, {DNNL_ARG_WEIGHTS, weights.get()}, {DNNL_ARG_DST, dst.get()}};
  std::vector<std::pair<dnnl::memory, int32_t>> extra;  // bias, post-op tensors and their nodes
  if (post_ops.bias >= 0) {
    dnnl::memory memory(post_ops.bias_desc, cpu_engine(), DNNL_MEMORY_NONE);
    args.push_back({DNNL_ARG_BIAS, memory.get()});
    extra.emplace_back(memory, post_ops.bias);
  }
  for (size_t t = 0; t < post_ops.tensors.size(); ++t) {
    auto [index, id] = post_ops.tensors[t];
    dnnl::memory memory(post_ops.descs[t], cpu_engine(), DNNL_MEMORY_NONE);
    args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, memory.get()});
    extra.emplace_back(memory, id);
  }
  // The rhs packed into the weights layout by a copy, else by oneDNN's reorder (a no-op primitive
  // when not packed).
  dnnl::memory plain(matrix_desc(rhs, *in_type), cpu_engine(), DNNL_MEMORY_NONE);
  std::optional<StridedCopy> pack_copy;
  dnnl::primitive pack;
  std::vector<dnnl_exec_arg_t> pack_args = {{DNNL_ARG_FROM, plain.get()},
                                            {DNNL_ARG_TO, weights.get()}};
  if (matmul->packed) {
    s.packed = s.take(static_cast<int64_t>(pd.weights_desc().get_size()));
    pack_copy = block_copy(rhs, pd.weights_desc(), dtype_size(in_dtype));
    if (!pack_copy) {
      pack = dnnl::reorder(
          dnnl::reorder::primitive_desc(cpu_engine(), plain.get_desc(), cpu_engine(),
                                        pd.weights_desc()));
    }
  }
  return Kernel{[=](const Buffers& buffers, std::byte* scratch) {
    const std::byte *a, *b;
    prepare(o, s, buffers, scratch, a, b);
    src.set_data_handle(const_cast<std::byte*>(a));
    dst.set_data_handle(buffers.at<std::byte>(o.out));
    for (const auto& [memory, id] : extra) memory.set_data_handle(buffers.at<std::byte>(id));
    if (s.packed >= 0) {
      weights.set_data_handle(scratch + s.packed);
      if (pack_copy) {
        run_copy(*pack_copy, scratch + s.packed, b);
      } else {
        plain.set_data_handle(const_cast<std::byte*>(b));
        execute(pack, pack_args);
      }
    } else {
      weights.set_data_handle(const_cast<std::byte*>(b));
    }
    execute(primitive, args);
    cpu_stream().wait();
  }, s.bytes};
}

// out[b, i, :] = sum over p of lhs[b, i, p] * rhs[b, p, :], in the accumulator type A, one
// accumulator row per thread.
template <typename T, typename Out, typename A>
Kernel loop_kernel(const DotLayout& layout, Operands o) {
  Scratch s;
  s.lhs = s.take(layout.batch * layout.m * layout.k * static_cast<int64_t>(sizeof(T)));
  s.rhs = s.take(layout.batch * layout.k * layout.n * static_cast<int64_t>(sizeof(T)));
  s.accumulators = s.take(kernel_threads() * layout.n * static_cast<int64_t>(sizeof(A)));
  int64_t batch = layout.batch, m = layout.m, k = layout.k, n = layout.n;
  return {[=](const Buffers& buffers, std::byte* scratch) {
    const std::byte *a_bytes, *b_bytes;
    prepare(o, s, buffers, scratch, a_bytes, b_bytes);
    const T* a = reinterpret_cast<const T*>(a_bytes);
    const T* b = reinterpret_cast<const T*>(b_bytes);
    Out* out = buffers.at<Out>(o.out);
    parallel_for(batch * m, grain_for(k * n),
                 [&](int64_t begin, int64_t end) {
      A* acc = reinterpret_cast<A*>(scratch + s.accumulators) + omp_get_thread_num() * n;
      for (int64_t row = begin; row < end; ++row) {
        const T* b_matrix = b + row / m * k * n;
        std::fill_n(acc, n, A(0));
        for (int64_t p = 0; p < k; ++p) {
          auto x = static_cast<A>(load(a[row * k + p]));
          const T* b_row = b_matrix + p * n;
          for (int64_t j = 0; j < n; ++j) {
            if constexpr (std::integral<A>) {
              auto product = static_cast<uint64_t>(x) * static_cast<uint64_t>(load(b_row[j]));
              acc[j] = static_cast<A>(static_cast<uint64_t>(acc[j]) + product);
            } else {
              acc[j] += x * static_cast<A>(load(b_row[j]));
            }
          }
        }
        for (int64_t j = 0; j < n; ++j) out[row * n + j] = store<Out>(acc[j]);
      }
    });
  }, s.bytes};
}

// Accumulates in double when f64 is involved, in float for other floating types, in wrapping
// int64 for integers.
Kernel fallback_kernel(const Node& node, const DotLayout& layout, Operands o, DType in_dtype) {
  return visit_numeric("dot_general", in_dtype, [&]<typename T>() {
    return visit_numeric("dot_general", node.dtype, [&]<typename Out>() -> Kernel {
      if constexpr (FloatStorage<T> != FloatStorage<Out>) {
        fail("dot_general", "no CPU kernel for ", dtype_name(in_dtype), " -> ",
             dtype_name(node.dtype));
      } else if constexpr (!FloatStorage<T>) {
        return loop_kernel<T, Out, int64_t>(layout, o);
      } else if constexpr (std::same_as<T, double> || std::same_as<Out, double>) {
        return loop_kernel<T, Out, double>(layout, o);
      } else {
        return loop_kernel<T, Out, float>(layout, o);
      }
    });
  });
}

// dot_general `id`'s operands and layout, its product to be written to the buffer of node `out`.
struct DotSetup {
  DotLayout layout;
  Operands operands;
  DType in_dtype;
};

DotSetup dot_setup(const Graph& graph, int32_t id, int32_t out) {
  const Node& node = graph.node(id);
  const Node& lhs = graph.node(node.inputs[0]);
  const Node& rhs = graph.node(node.inputs[1]);
  DotLayout layout = dot_layout(lhs.shape, rhs.shape, node.attr<DotAttrs>());
  size_t element = dtype_size(lhs.dtype);
  return {layout,
          Operands{node.inputs[0], node.inputs[1], out,
                   canonical_copy(lhs.shape, layout.lhs_order, element),
                   canonical_copy(rhs.shape, layout.rhs_order, element)},
          lhs.dtype};
}

// The product of dot_general `id` with `post_ops` applied by oneDNN, written to the buffer of node
// `out` in out's dtype; empty when oneDNN does not take them (or there is nothing to multiply).
std::optional<Kernel> fused_dot_kernel(const Graph& graph, int32_t id, int32_t out,
                                       const PostOps& post_ops) {
  DotSetup d = dot_setup(graph, id, out);
  if (shape_numel(graph.node(id).shape) == 0 || d.layout.k == 0) return std::nullopt;
  return onednn_kernel(d.layout, d.operands, d.in_dtype, graph.node(out).dtype, post_ops);
}

// One epilogue node of a gemm group, applied to the product in place when oneDNN cannot fuse it.
struct EpilogueStep {
  enum Kind : uint8_t { bias, tensor, scale, gelu } kind;
  int32_t operand = -1;  // bias: the [n] vector; tensor: the added tensor
  float value = 1.0f;    // scale
};

// The product of dot_general `id` with the epilogue `steps` into the buffer of node `out` on Kiln's
// own kernels where they take it: bf16 operands on AMX tiles where AMX is in use
// (amx_products.h), an f32 or a bf16 result (the group's last cast, or the product's own dtype);
// f32 operands and result on AVX2 register tiles where the kernels use AVX2 (f32_products.h).
// Either way the operands are read in place, each a plain or a transposed matrix, with at most
// one step, a bias or an added f32 tensor, which c starts from. Empty elsewhere.
std::optional<Kernel> own_product_kernel(const Graph& graph, int32_t id, int32_t out,
                                         const std::vector<EpilogueStep>& steps) {
  DotSetup d = dot_setup(graph, id, out);
  const DotLayout& layout = d.layout;
  DType out_dtype = graph.node(out).dtype;
  bool bf16 = d.in_dtype == DType::bf16 && (out_dtype == DType::f32 || out_dtype == DType::bf16);
  bool f32 = d.in_dtype == DType::f32 && out_dtype == DType::f32;
  if ((!bf16 && !f32) || !layout.batch_sizes.empty() || !layout.lhs_view || !layout.rhs_view ||
      steps.size() > 1) {
    return std::nullopt;
  }
  MatrixProduct product{.rows = layout.m, .inner = layout.k, .cols = layout.n, .ldc = layout.n,
                        .bf16_result = out_dtype == DType::bf16};
  const MatrixView &lhs = *layout.lhs_view, &rhs = *layout.rhs_view;  // [rows, cols] each
  if (lhs.strides[1] != 1 && lhs.strides[0] != 1) return std::nullopt;
  if (rhs.strides[1] != 1 && rhs.strides[0] != 1) return std::nullopt;
  product.a_transposed = lhs.strides[1] != 1;
  product.b_transposed = rhs.strides[1] != 1;
  product.lda = product.a_transposed ? lhs.strides[1] : lhs.strides[0];
  product.ldb = product.b_transposed ? rhs.strides[1] : rhs.strides[0];
  int32_t start = -1;
  if (!steps.empty()) {
    const EpilogueStep& step = steps.front();
    if (step.kind != EpilogueStep::bias && step.kind != EpilogueStep::tensor) return std::nullopt;
    start = step.operand;
    if (graph.node(start).dtype != DType::f32) return std::nullopt;
    product.start = step.kind == EpilogueStep::bias ? MatrixProduct::Start::bias
                                                     : MatrixProduct::Start::addend;
  }
  Operands o = d.operands;
  if (bf16 && amx_product_fits(product)) {
    return Kernel{[=](const Buffers& buffers, std::byte* scratch) {
      amx_product(product, buffers.at<const uint16_t>(o.lhs), buffers.at<const uint16_t>(o.rhs),
                  start >= 0 ? buffers.at<const float>(start) : nullptr, buffers.at<void>(o.out),
                  scratch);
    }, amx_product_scratch_bytes(product)};
  }
  if (f32 && f32_product_fits(product)) {
    return Kernel{[=](const Buffers& buffers, std::byte* scratch) {
      f32_product(product, buffers.at<const float>(o.lhs), buffers.at<const float>(o.rhs),
                  start >= 0 ? buffers.at<const float>(start) : nullptr, buffers.at<float>(o.out),
                  scratch);
    }, f32_product_scratch_bytes(product)};
  }
  return std::nullopt;
}

// The product of dot_general `id` written to the buffer of node `out` (of the product's dtype).
Kernel dot_kernel(const Graph& graph, int32_t id, int32_t out) {
  const Node& node = graph.node(id);
  DotSetup d = dot_setup(graph, id, out);
  int64_t out_bytes = shape_numel(node.shape) * static_cast<int64_t>(dtype_size(node.dtype));
  if (out_bytes == 0) return {[](const Buffers&, std::byte*) {}};
  if (d.layout.k == 0) {  // empty sums: zeros (all dtypes have an all-zero-bits zero)
    return {[=](const Buffers& buffers, std::byte*) {
      std::memset(buffers.at<std::byte>(out), 0, static_cast<size_t>(out_bytes));
    }};
  }
  if (std::optional<Kernel> kernel = own_product_kernel(graph, id, id, {})) return *kernel;
  if (std::optional<Kernel> kernel =
          onednn_kernel(d.layout, d.operands, d.in_dtype, node.dtype, PostOps{})) {
    return *kernel;
  }
  return fallback_kernel(node, d.layout, d.operands, d.in_dtype);
}

}  // namespace
}  // namespace kiln::cpu

#define KILN_ISA_BODY "kiln/backends/cpu/dot_epilogue.inc"
#include "kiln/backends/cpu/isa_variants.inc"

namespace kiln::cpu {
namespace {

// The epilogue's steps; and as oneDNN post-ops in `post_ops`.
std::vector<EpilogueStep> epilogue_of(const Graph& graph, const KernelGroup& group,
                                      PostOps& post_ops) {
  std::vector<EpilogueStep> steps;
  dnnl::post_ops ops;
  int32_t previous = group.nodes.front();
  const Node& dot = graph.node(previous);
  DotLayout layout = dot_layout(graph.node(dot.inputs[0]).shape, graph.node(dot.inputs[1]).shape,
                                dot.attr<DotAttrs>());
  // A bias as a [1..., 1, n] tensor of the product's rank, broadcast over the rest.
  MatrixView bias_view = dense_view(std::vector<int64_t>(layout.batch_sizes.size(), 1), 1,
                                    layout.n);
  for (int32_t id : group.nodes) {
    const Node& node = graph.node(id);
    if (id == group.nodes.front() || node.op == OpKind::broadcast) continue;
    if (node.op == OpKind::cast) {  // the last step: oneDNN writes the destination's dtype
      previous = id;
      continue;
    }
    if (node.op == OpKind::gelu) {
      steps.push_back({EpilogueStep::gelu});
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    } else {
      int32_t other = node.inputs[0] == previous ? node.inputs[1] : node.inputs[0];
      const Node& o = graph.node(other);
      if (node.op == OpKind::mul) {  // by a broadcast scalar constant
        const Tensor& value = graph.node(o.inputs[0]).attr<ConstantAttrs>().value;
        auto factor = static_cast<float>(value.get(0));
        steps.push_back({EpilogueStep::scale, -1, factor});
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, factor, 0.0f);
      } else if (o.op == OpKind::broadcast && steps.empty()) {  // a bias, first: the matmul's
        steps.push_back({EpilogueStep::bias, o.inputs[0]});
        post_ops.bias = o.inputs[0];
        post_ops.bias_desc = matrix_desc(bias_view, *dnnl_type(graph.node(o.inputs[0]).dtype));
      } else if (o.op == OpKind::broadcast) {  // a bias after other steps
        steps.push_back({EpilogueStep::bias, o.inputs[0]});
        post_ops.tensors.emplace_back(ops.len(), o.inputs[0]);
        post_ops.descs.push_back(matrix_desc(bias_view, *dnnl_type(graph.node(o.inputs[0]).dtype)));
        ops.append_binary(dnnl::algorithm::binary_add, post_ops.descs.back());
      } else {  // a tensor shaped as the product
        steps.push_back({EpilogueStep::tensor, other});
        post_ops.tensors.emplace_back(ops.len(), other);
        MatrixView view = dense_view(layout.batch_sizes, layout.m, layout.n);
        post_ops.descs.push_back(matrix_desc(view, *dnnl_type(o.dtype)));
        ops.append_binary(dnnl::algorithm::binary_add, post_ops.descs.back());
      }
    }
    previous = id;
  }
  post_ops.attr.set_post_ops(ops);
  return steps;
}

}  // namespace

Kernel make_dot_general(const Graph& graph, int32_t id) { return dot_kernel(graph, id, id); }

Kernel make_gemm_kernel(const Graph& graph, const KernelGroup& group) {
  int32_t out = group.nodes.back();
  PostOps post_ops;
  std::vector<EpilogueStep> steps = epilogue_of(graph, group, post_ops);
  if (std::optional<Kernel> own = own_product_kernel(graph, group.nodes.front(), out, steps)) {
    return *own;
  }
  if (std::optional<Kernel> fused = fused_dot_kernel(graph, group.nodes.front(), out, post_ops)) {
    return *fused;
  }
  // oneDNN declined the post-ops: the product, then each step over it in place. When the epilogue
  // ends in a cast (oneDNN does not round an f32 product to bf16), the product with its steps as
  // post-ops where oneDNN takes them, in f32, else as above, in scratch; then the cast from there.
  bool cast_last = graph.node(out).op == OpKind::cast;
  int32_t values_node = cast_last ? graph.node(out).inputs[0] : out;
  std::optional<Kernel> fused_values =
      cast_last ? fused_dot_kernel(graph, group.nodes.front(), values_node, post_ops)
                : std::nullopt;
  if (fused_values) steps.clear();
  Kernel product =
      fused_values ? *fused_values : dot_kernel(graph, group.nodes.front(), values_node);
  const Node& node = graph.node(group.nodes.front());  // the product; the steps keep its shape
  int64_t n = node.shape.empty() ? 1 : node.shape.back();
  int64_t count = shape_numel(node.shape);
  int64_t values_at = whole_lines(product.scratch_bytes);
  int64_t values_bytes = cast_last ? count * static_cast<int64_t>(dtype_size(node.dtype)) : 0;
  return visit_floating("gemm", node.dtype, [&]<typename T>() -> Kernel {
    auto apply = KILN_ISA_DISPATCH(apply_step<T>);
    auto round_into = KILN_ISA_DISPATCH(round_into_bf16);
    return {[=](const Buffers& buffers, std::byte* scratch) {
      T* values;
      if (cast_last) {  // the product's own view of the buffers, with its result in scratch
        Buffers local = buffers;
        values = reinterpret_cast<T*>(scratch + values_at);
        local.slot[static_cast<size_t>(values_node)] = scratch + values_at;
        product.run(local, scratch);
      } else {
        product.run(buffers, scratch);
        values = buffers.at<T>(out);
      }
      for (const EpilogueStep& step : steps) {
        const T* operand = step.operand >= 0 ? buffers.at<T>(step.operand) : nullptr;
        parallel_for(count, kGrain, [&](int64_t begin, int64_t end) {
          apply(step, values, operand, begin, end, n);
        });
      }
      if constexpr (std::same_as<T, float>) {
        if (cast_last) {
          parallel_for(count, kGrain, [&](int64_t begin, int64_t end) {
            round_into(values, buffers.at<Bf16>(out), begin, end);
          });
        }
      }
    }, values_at + values_bytes};
  });
}

}  // namespace kiln::cpu
