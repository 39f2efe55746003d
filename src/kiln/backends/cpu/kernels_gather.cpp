// CPU kernels of gather and scatter_add along one axis. Indices are checked before any data moves:
// one outside the axis is an Error naming the op, the index and its position, as in the reference.
#include <algorithm>
#include <cstring>
#include <optional>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"

namespace kiln::cpu {
namespace {

// The operand viewed as [outer, size, inner] around the axis; indices select along `size`.
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};

AxisView axis_view(const Shape& operand, int64_t axis) {
  AxisView view;
  for (size_t d = 0; d < operand.size(); ++d) {
    auto dim = static_cast<int64_t>(d);
    (dim < axis ? view.outer : dim == axis ? view.size : view.inner) *= operand[d];
  }
  return view;
}

// Flat position `flat` of `shape` as a multi-index, printed as "(1,0)".
std::string index_str(int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return shape_str(index);
}

// Reads the indices (i32 or i64) and checks each against the axis size.
struct IndexReader {
  std::string_view op;
  int32_t id;
  DType dtype;
  Shape shape;
  int64_t size;

  int64_t at(const Buffers& buffers, int64_t j) const {
    return dtype == DType::i32 ? buffers.at<int32_t>(id)[j] : buffers.at<int64_t>(id)[j];
  }
  void check_all(const Buffers& buffers) const {
    for (int64_t j = 0; j < shape_numel(shape); ++j) {
      int64_t index = at(buffers, j);
      if (index < 0 || index >= size) {  // the message is built only then: it allocates
        fail(op, "index ", index, " at position ", index_str(j, shape),
             " of the indices is outside [0, ", size, ")");
      }
    }
  }
};

// The value a scatter_add's operand spreads when it is a broadcast scalar constant (a zero
// gradient): the fusion pass reads such a broadcast in place, so it has no buffer of its own.
std::optional<double> broadcast_constant(const Graph& graph, int32_t operand) {
  auto resolve = [&](int32_t id) {  // as the fusion pass, through reshapes
    while (graph.node(id).op == OpKind::reshape) id = graph.node(id).inputs[0];
    return id;
  };
  const Node& node = graph.node(resolve(operand));
  if (node.op != OpKind::broadcast) return std::nullopt;
  const Node& source = graph.node(resolve(node.inputs[0]));
  if (source.op != OpKind::constant || shape_numel(source.shape) != 1) return std::nullopt;
  return source.attr<ConstantAttrs>().value.get(0);
}

IndexReader index_reader(const Graph& graph, const Node& node, int64_t size) {
  const Node& indices = graph.node(node.inputs[1]);
  check(indices.dtype == DType::i32 || indices.dtype == DType::i64, op_name(node.op),
        "indices must be i32 or i64, got ", dtype_name(indices.dtype));
  return {op_name(node.op), node.inputs[1], indices.dtype, indices.shape, size};
}

}  // namespace

Kernel make_gather(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  int32_t operand = node.inputs[0];
  AxisView view = axis_view(graph.node(operand).shape, node.attr<GatherAttrs>().axis);
  IndexReader indices = index_reader(graph, node, view.size);
  int64_t count = shape_numel(indices.shape);
  size_t block = static_cast<size_t>(view.inner) * dtype_size(node.dtype);
  return {[=](const Buffers& buffers, std::byte*) {
    indices.check_all(buffers);
    const std::byte* in = buffers.at<std::byte>(operand);
    std::byte* out = buffers.at<std::byte>(id);
    parallel_for(view.outer * count, grain_for(view.inner),
                 [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        int64_t o = item / count, source = o * view.size + indices.at(buffers, item % count);
        std::memcpy(out + static_cast<size_t>(item) * block,
                    in + static_cast<size_t>(source) * block, block);
      }
    });
  }};
}

// The operand copied (or its constant spread), then each update row added at its index;
// duplicates accumulate in order. Half types accumulate in f32 scratch and round once at the end.
Kernel make_scatter_add(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  int32_t operand = node.inputs[0], updates = node.inputs[2];
  AxisView view = axis_view(node.shape, node.attr<GatherAttrs>().axis);
  IndexReader indices = index_reader(graph, node, view.size);
  int64_t count = shape_numel(indices.shape), n = shape_numel(node.shape);
  std::optional<double> fill = broadcast_constant(graph, operand);
  // An embedding's gradient (one outer slice) is split by columns as well, 64 bytes of f32 a
  // block: its rows went to one thread (BERT-tiny's 2,048 x 128 under the avx2 cap, while the
  // other thread waited).
  constexpr int64_t kScatterColumns = 16;
  const int64_t column_blocks = (view.inner + kScatterColumns - 1) / kScatterColumns;
  return visit_numeric("scatter_add", node.dtype, [&]<typename T>() -> Kernel {
    using A = std::conditional_t<HalfStorage<T>, float, T>;  // the accumulator's storage
    // The constant as the operand holds it (rounded to T), in the accumulator's storage.
    const A start = store<A>(load(store<T>(static_cast<Compute<T>>(fill.value_or(0.0)))));
    int64_t scratch = HalfStorage<T> ? n * static_cast<int64_t>(sizeof(float)) : 0;
    return {[=](const Buffers& buffers, std::byte* scratch_bytes) {
      indices.check_all(buffers);
      const T* in = buffers.at<T>(operand);
      const T* rows = buffers.at<T>(updates);
      T* out = buffers.at<T>(id);
      A* acc = HalfStorage<T> ? reinterpret_cast<A*>(scratch_bytes) : reinterpret_cast<A*>(out);
      parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
        if (fill) {
          std::fill(acc + begin, acc + end, start);
        } else {
          for (int64_t i = begin; i < end; ++i) acc[i] = store<A>(load(in[i]));
        }
      });
      // Outer slices and column blocks are independent; within one, rows land in index order.
      parallel_for(view.outer * column_blocks, grain_for(count * kScatterColumns),
                   [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
          const int64_t o = item / column_blocks, e0 = item % column_blocks * kScatterColumns;
          const int64_t e1 = std::min(view.inner, e0 + kScatterColumns);
          for (int64_t j = 0; j < count; ++j) {
            A* slot = acc + (o * view.size + indices.at(buffers, j)) * view.inner;
            const T* row = rows + (o * count + j) * view.inner;
            for (int64_t e = e0; e < e1; ++e) {
              if constexpr (std::integral<A>) {
                slot[e] = store<A>(static_cast<int64_t>(static_cast<uint64_t>(load(slot[e])) +
                                                        static_cast<uint64_t>(load(row[e]))));
              } else {
                slot[e] = slot[e] + load(row[e]);
              }
            }
          }
        }
      });
      if constexpr (HalfStorage<T>) {
        parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) out[i] = store<T>(acc[i]);
        });
      }
    }, scratch};
  });
}

}  // namespace kiln::cpu
