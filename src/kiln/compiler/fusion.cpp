// Fusion: groups nodes into kernels, visiting them in order and adding each to the group of one
// of its producers when it can join it (producer -> consumer fusion, several results per group):
//   loop  elementwise nodes over one flat index space (unary, binary, compare, select, cast, gelu,
//         gelu_grad, dropout, and the computed sources random_bits and iota); broadcasts of values computed
//         before the group are read in place by index, never materialised; reductions over
//         trailing axes end rows of the space, or (not in the same group) sums over leading axes
//         gather its columns;
//   gemm  a dot_general and a chain of epilogue nodes after it (bias, scaling, gelu, the add of a
//         tensor computed before), each the only reader of the one before.
// Collectives are never fused: each is a kernel of its own, where a backend calls its communicator.
// A node recomputed for the backward pass (layer_mark::recomputed) joins only groups the backward
// pass started: in a forward kernel it would be kept until the backward pass, as if never dropped.
// A node may join a group only if its other operands are computed by earlier groups, so groups
// never form a cycle and run in the order they were made. schedule_kernels() orders them.
#include <algorithm>
#include <functional>
#include <unordered_set>

#include "kiln/compiler/passes.h"
#include "kiln/compiler/views.h"
#include "kiln/ir/op_registry.h"

namespace kiln {
namespace {

bool elementwise(OpKind op) {
  OpCategory category = op_info(op).category;
  return category == OpCategory::unary || category == OpCategory::binary ||
         op == OpKind::compare || op == OpKind::select || op == OpKind::cast ||
         op == OpKind::gelu || op == OpKind::gelu_grad || op == OpKind::dropout ||
         op == OpKind::random_bits ||
         op == OpKind::iota;
}

bool gemm_dtype(DType dtype) { return dtype == DType::f32 || dtype == DType::bf16; }

// Whether operand k of `n` is a key of random bits (random_bits' seed and offset, dropout's): loop
// kernels read keys from their buffers, by row, never as a register of the group's elements.
bool key_operand(const Node& n, size_t k) {
  return (n.op == OpKind::random_bits && k < 2) || (n.op == OpKind::dropout && k >= 1);
}

struct Group {
  KernelGroup kernel;
  int64_t domain = 0;   // elements of the index space (loop groups)
  int64_t width = 0;    // elements per reduced row, 0 before the first row reduction (loop groups)
  int64_t columns = 0;  // columns summed, 0 before the first column sum (loop groups)
  int32_t last = 0;     // the node added last
  int32_t first = 0;    // the node that started it
};

class Fuser {
 public:
  Fuser(const Module& module, const BackendCapabilities& capabilities)
      : graph_(*module.graph), capabilities_(capabilities) {
    auto count = static_cast<size_t>(graph_.size());
    readers_.resize(count);
    for (int32_t id = 0; id < graph_.size(); ++id) {
      for (int32_t operand : graph_.node(id).inputs) {
        readers_[static_cast<size_t>(operand)].push_back(id);
      }
    }
    is_output_.assign(count, false);
    for (int32_t id : module.outputs) is_output_[static_cast<size_t>(id)] = true;
    group_of_.assign(count, -1);
    read_in_place_.assign(count, false);
    for (int32_t id = 0; id < graph_.size(); ++id) {
      read_in_place_[static_cast<size_t>(id)] = broadcast_read_in_place(id);
    }
  }

  std::vector<KernelGroup> run() {
    // Scalars computed from sources alone (bias corrections, learning-rate factors) are placed
    // first: a node reading one can then join the group of its other operands, which would
    // otherwise have been made before the scalar existed.
    std::vector<bool> early = scalars_from_sources();
    for (int32_t id = 0; id < graph_.size(); ++id) {
      if (early[static_cast<size_t>(id)]) place(id);
    }
    for (int32_t id = 0; id < graph_.size(); ++id) {
      if (!early[static_cast<size_t>(id)]) place(id);
    }
    std::vector<KernelGroup> kernels;
    for (Group& group : groups_) {
      group.kernel.results = results_of(group.kernel);
      kernels.push_back(std::move(group.kernel));
    }
    return kernels;
  }

 private:
  const Node& node(int32_t id) const { return graph_.node(id); }

  // Nodes of at most one element whose operands are inputs, constants or such nodes themselves.
  std::vector<bool> scalars_from_sources() const {
    std::vector<bool> early(static_cast<size_t>(graph_.size()), false);
    for (int32_t id = 0; id < graph_.size(); ++id) {
      const Node& n = node(id);
      if (n.op == OpKind::input || n.op == OpKind::constant || shape_numel(n.shape) > 1) continue;
      auto from_sources = [&](int32_t o) {
        OpKind op = node(o).op;
        return op == OpKind::input || op == OpKind::constant || early[static_cast<size_t>(o)];
      };
      early[static_cast<size_t>(id)] = std::all_of(n.inputs.begin(), n.inputs.end(), from_sources);
    }
    return early;
  }

  // Follows reshapes to the node whose bytes (or register) a value is.
  int32_t resolve(int32_t id) const {
    while (node(id).op == OpKind::reshape) id = node(id).inputs[0];
    return id;
  }

  // Readers and output uses, looking through reshapes.
  template <typename F>
  void for_each_reader(int32_t id, const F& f) const {
    for (int32_t reader : readers_[static_cast<size_t>(id)]) {
      if (node(reader).op == OpKind::reshape) {
        for_each_reader(reader, f);
      } else {
        f(reader);
      }
    }
  }
  bool used_as_output(int32_t id) const {
    if (is_output_[static_cast<size_t>(id)]) return true;
    for (int32_t reader : readers_[static_cast<size_t>(id)]) {
      if (node(reader).op == OpKind::reshape && used_as_output(reader)) return true;
    }
    return false;
  }

  bool recomputed(int32_t id) const { return graph_.layer_mark(id) == layer_mark::recomputed; }
  bool in_backward_pass(int32_t id) const {
    return recomputed(id) || graph_.layer_mark(id) == layer_mark::backward;
  }

  bool reduces_in_loops(const Node& n) const {
    LoopReduction reduction = loop_reduction(graph_, n);
    return reduction.width > 0 || reduction.columns > 0;
  }

  bool loop_member(const Node& n) const {
    return capabilities_.loop_fusion &&
           ((elementwise(n.op) && n.op != OpKind::broadcast) ||
            reduces_in_loops(n));
  }

  // A broadcast every reader of which is a loop-group node, or a scatter_add starting from it
  // when it spreads a scalar constant (a zero gradient), is read in place by those groups (each
  // lists it); otherwise it gets a kernel of its own.
  bool broadcast_read_in_place(int32_t id) const {
    if (node(id).op != OpKind::broadcast || !capabilities_.loop_fusion || used_as_output(id)) {
      return false;
    }
    const Node& source = node(resolve(node(id).inputs[0]));
    bool scalar_constant = source.op == OpKind::constant && shape_numel(source.shape) == 1;
    bool all = true;
    for_each_reader(id, [&](int32_t reader) {
      const Node& r = node(reader);
      bool fills_scatter = scalar_constant && r.op == OpKind::scatter_add &&
                           resolve(r.inputs[0]) == id && resolve(r.inputs[2]) != id;
      for (size_t k = 0; k < r.inputs.size(); ++k) {
        all = all && !(key_operand(r, k) && resolve(r.inputs[k]) == id);
      }
      all = all && (loop_member(r) || fills_scatter);
    });
    return all;
  }
  bool in_place(int32_t id) const { return read_in_place_[static_cast<size_t>(id)]; }
  int32_t group(int32_t id) const { return group_of_[static_cast<size_t>(id)]; }

  int64_t domain_of(const Node& n) const {
    if (reduces_in_loops(n)) return shape_numel(node(n.inputs[0]).shape);
    return shape_numel(n.shape);
  }

  void place(int32_t id) {
    const Node& n = node(id);
    if (n.op == OpKind::input || n.op == OpKind::constant || view_offset(graph_, id) ||
        in_place(id)) {
      return;
    }
    if (n.op == OpKind::dot_general && capabilities_.gemm_epilogues && gemm_dtype(n.dtype) &&
        gemm_dtype(node(n.inputs[0]).dtype) && node(n.inputs[0]).dtype == node(n.inputs[1]).dtype) {
      start_group(id, KernelKind::gemm, 0);
      return;
    }
    if (!loop_member(n)) {
      start_group(id, KernelKind::single, 0);
      return;
    }
    // The groups of its operands, the one made last first.
    std::vector<int32_t> candidates;
    for (int32_t operand : n.inputs) {
      int32_t g = group(resolve(operand));
      if (g >= 0 && std::find(candidates.begin(), candidates.end(), g) == candidates.end()) {
        candidates.push_back(g);
      }
    }
    std::sort(candidates.begin(), candidates.end(), std::greater<>());
    // Failing those, the group made last, without a producer there (random bits, a sibling
    // reading the same operands): one kernel fewer, and often a value that needs no buffer.
    auto last = static_cast<int32_t>(groups_.size()) - 1;
    if (last >= 0 && std::find(candidates.begin(), candidates.end(), last) == candidates.end()) {
      candidates.push_back(last);
    }
    for (int32_t g : candidates) {
      Group& target = groups_[static_cast<size_t>(g)];
      if (recomputed(id) && !in_backward_pass(target.first)) continue;
      bool joins = target.kernel.kind == KernelKind::loop ? joins_loop(target, g, id)
                   : target.kernel.kind == KernelKind::gemm ? joins_gemm(target, g, id)
                                                            : false;
      if (joins) {
        add(g, id);
        return;
      }
    }
    start_group(id, KernelKind::loop, domain_of(n));
  }

  void start_group(int32_t id, KernelKind kind, int64_t domain) {
    groups_.push_back({KernelGroup{kind, {}, {}}, domain, 0, 0, id, id});
    add(static_cast<int32_t>(groups_.size() - 1), id);
  }

  // Adds `id` to group g, after the broadcasts it reads in place.
  void add(int32_t g, int32_t id) {
    Group& target = groups_[static_cast<size_t>(g)];
    for (int32_t operand : node(id).inputs) {
      int32_t source = resolve(operand);
      if (in_place(source) && listed_.insert(key(g, source)).second) {
        target.kernel.nodes.push_back(source);
      }
    }
    target.kernel.nodes.push_back(id);
    target.last = id;
    group_of_[static_cast<size_t>(id)] = g;
    LoopReduction reduction = loop_reduction(graph_, node(id));
    if (reduction.width > 0) target.width = reduction.width;
    if (reduction.columns > 0) target.columns = reduction.columns;
  }
  static int64_t key(int32_t g, int32_t id) { return (static_cast<int64_t>(g) << 32) | id; }

  // Whether an elementwise node or a trailing reduction can join loop group g.
  bool joins_loop(const Group& target, int32_t g, int32_t id) {
    const Node& n = node(id);
    if (domain_of(n) != target.domain) return false;
    // Rows of one width, and never rows and columns in one group (rows align blocks to them;
    // columns are gathered over each thread's range).
    LoopReduction reduction = loop_reduction(graph_, n);
    if (reduction.width > 0 && (target.columns > 0 || (target.width > 0 &&
                                                       reduction.width != target.width))) {
      return false;
    }
    if (reduction.columns > 0 && target.width > 0) return false;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      int32_t operand = n.inputs[k];
      int32_t source = resolve(operand);
      if (in_place(source)) source = resolve(node(source).inputs[0]);  // read by index
      if (group(source) == g) {
        if (key_operand(n, k)) return false;
        // Values of the group are read at the same element: not through a broadcast, and not a
        // reduction's row result.
        if (in_place(resolve(operand)) || reduces_in_loops(node(source))) {
          return false;
        }
      } else if (!earlier(source, g)) {
        return false;
      }
    }
    return true;
  }

  // Whether `id` extends the epilogue chain of gemm group g.
  bool joins_gemm(const Group& target, int32_t g, int32_t id) {
    int32_t tail = target.last;
    const Node& n = node(id);
    if (readers_[static_cast<size_t>(tail)].size() != 1 || is_output_[static_cast<size_t>(tail)] ||
        node(tail).op == OpKind::cast) {  // a cast ends the epilogue: later steps round again
      return false;
    }
    // A cast of the f32 result to bf16 (--bf16's operands of attention), rounded as it is stored.
    // Through reshapes (the heads split from the hidden dim) read by nothing else.
    if (n.op == OpKind::cast) {
      int readers = 0;
      for_each_reader(tail, [&](int32_t) { ++readers; });
      return resolve(n.inputs[0]) == tail && readers == 1 && !used_as_output(tail) &&
             node(tail).dtype == DType::f32 && n.dtype == DType::bf16;
    }
    if (n.dtype != node(tail).dtype) return false;
    if (n.op == OpKind::gelu) return n.inputs[0] == tail;
    if (n.op != OpKind::add && n.op != OpKind::mul) return false;
    if (n.inputs[0] != tail && n.inputs[1] != tail) return false;
    int32_t other = n.inputs[0] == tail ? n.inputs[1] : n.inputs[0];
    if (other == tail) return false;
    const Node& o = node(other);
    bool scalar_constant = o.op == OpKind::broadcast && node(o.inputs[0]).op == OpKind::constant &&
                           shape_numel(node(o.inputs[0]).shape) == 1;
    if (n.op == OpKind::mul) return scalar_constant && in_place(other);
    if (scalar_constant) return false;
    if (o.op == OpKind::broadcast) {
      // A bias: one value per column of the matrix product (whose rhs has one free dim), read
      // in place.
      const Node& bias = node(o.inputs[0]);
      const Axes& dims = o.attr<BroadcastAttrs>().dims;
      const Node& dot = node(target.kernel.nodes.front());
      const DotAttrs& attrs = dot.attr<DotAttrs>();
      auto rhs_rank = static_cast<int64_t>(node(dot.inputs[1]).shape.size());
      return in_place(other) && bias.shape.size() == 1 && dims.size() == 1 &&
             dims[0] == static_cast<int64_t>(n.shape.size()) - 1 &&
             dot_free_dims(rhs_rank, attrs.rhs_batch, attrs.rhs_contract).size() == 1 &&
             earlier(other, g);
    }
    // The add of a whole tensor computed before.
    return o.shape == n.shape && earlier(other, g);
  }

  // Whether value `id`, read by a node joining group g, is computed before group g: a source, or
  // the value of a group made earlier. Joins keep every edge between groups going from an
  // earlier group to a later one, so groups never form a cycle and run in the order they were made.
  bool earlier(int32_t id, int32_t g) const {
    int32_t source = view_root(graph_, id);
    if (in_place(source)) source = view_root(graph_, node(source).inputs[0]);
    return group(source) < g;
  }

  // The nodes of a group read by later kernels or by the outputs. Broadcasts read in place are
  // read where they are, never results; a group never reads its own values through them.
  std::vector<int32_t> results_of(const KernelGroup& kernel) const {
    std::vector<int32_t> results;
    for (int32_t id : kernel.nodes) {
      if (in_place(id)) continue;
      int32_t g = group(id);
      bool read_later = used_as_output(id);
      for_each_reader(id, [&](int32_t reader) {
        read_later = read_later || in_place(reader) || group(reader) != g;
      });
      // A gemm kernel writes its last node (oneDNN's destination) even when nothing reads it.
      bool gemm_tail = kernel.kind == KernelKind::gemm && id == kernel.nodes.back();
      if (read_later || gemm_tail) results.push_back(id);
    }
    return results;
  }

  const Graph& graph_;
  const BackendCapabilities& capabilities_;
  std::vector<std::vector<int32_t>> readers_;
  std::vector<bool> is_output_;
  std::vector<bool> read_in_place_;
  std::vector<int32_t> group_of_;
  std::vector<Group> groups_;
  std::unordered_set<int64_t> listed_;  // (group, broadcast) pairs already in a group
};

}  // namespace

LoopReduction loop_reduction(const Graph& graph, const Node& node) {
  if (node.op != OpKind::reduce_sum && node.op != OpKind::reduce_max) return {};
  const Shape& shape = graph.node(node.inputs[0]).shape;
  if (shape_numel(shape) == 0) return {};
  const Axes& axes = node.attr<ReduceAttrs>().axes;
  // The non-unit dims as reduced (true) or kept, in order.
  std::vector<bool> reduced;
  int64_t reduced_size = 1, kept_size = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool r = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    reduced.push_back(r);
    (r ? reduced_size : kept_size) *= shape[d];
  }
  auto first_reduced = std::find(reduced.begin(), reduced.end(), true);
  auto first_kept = std::find(reduced.begin(), reduced.end(), false);
  bool trailing = std::find(first_reduced, reduced.end(), false) == reduced.end();
  if (trailing) return {reduced_size, 0};  // every reduced dim after every kept one
  bool leading = std::find(first_kept, reduced.end(), true) == reduced.end();
  // Each thread keeps an accumulator per column: at most 2^16 (512 KiB), or the sum runs alone.
  if (leading && node.op == OpKind::reduce_sum && kept_size <= (int64_t{1} << 16)) {
    return {0, kept_size};
  }
  return {};
}

std::vector<KernelGroup> fuse_kernels(const Module& module,
                                      const BackendCapabilities& capabilities) {
  return Fuser(module, capabilities).run();
}

}  // namespace kiln
