// Graphs of typed values in SSA form. A Graph owns its nodes in creation (topological) order;
// a Value is a handle (graph, node id) that builders in kiln/ir/ops.h combine.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/op.h"

namespace kiln {

class Graph;

struct Node {
  OpKind op;
  std::vector<int32_t> inputs;  // node ids, all smaller than this node's id
  Attrs attrs;
  DType dtype;
  Shape shape;

  template <typename A>
  const A& attr() const { return std::get<A>(attrs); }
};

class Value {
 public:
  Value() = default;
  Value(Graph* graph, int32_t id) : graph_(graph), id_(id) {}

  bool valid() const { return graph_ != nullptr; }
  Graph& graph() const { return *graph_; }
  int32_t id() const { return id_; }
  const Node& node() const;
  OpKind op() const { return node().op; }
  DType dtype() const { return node().dtype; }
  const Shape& shape() const { return node().shape; }
  int64_t rank() const { return static_cast<int64_t>(shape().size()); }
  // Size of `axis`; negative axes count from the end.
  int64_t dim(int64_t axis) const;
  int64_t numel() const { return shape_numel(shape()); }
  // Same node of the same graph (operator== is not used: it would read as elementwise).
  bool is(const Value& other) const { return graph_ == other.graph_ && id_ == other.id_; }

 private:
  Graph* graph_ = nullptr;
  int32_t id_ = -1;
};

// Which part of a model built a node, for gradient checkpointing (compiler/checkpoint.cpp): a
// layer's index (0, 1, ...) or one of these marks. Passes give a rebuilt node its source's mark.
namespace layer_mark {
inline constexpr int32_t none = -1;        // outside every layer (embeddings, heads, optimizer)
inline constexpr int32_t backward = -2;    // built by the backward pass
inline constexpr int32_t recomputed = -3;  // a layer's node recomputed for the backward pass
}  // namespace layer_mark

class Graph {
 public:
  Graph() = default;
  // Values point at their graph, so a graph stays where it was made.
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // A runtime argument. Arguments are passed to backends in creation order (see inputs()).
  Value input(std::string name, DType dtype, Shape shape, InputRole role = InputRole::data);

  // Appends a node after checking that every operand belongs to this graph. Builders call this
  // once they have inferred dtype and shape; it does no inference itself.
  Value add_node(OpKind op, const std::vector<Value>& inputs, Attrs attrs, DType dtype,
                 Shape shape);

  const Node& node(int32_t id) const { return nodes_.at(static_cast<size_t>(id)); }
  Value value(int32_t id) { return Value(this, id); }
  // A deque: references to nodes stay valid while builders append more (VJP rules rely on it).
  const std::deque<Node>& nodes() const { return nodes_; }
  int32_t size() const { return static_cast<int32_t>(nodes_.size()); }
  // Ids of the input nodes, in argument order.
  const std::vector<int32_t>& inputs() const { return inputs_; }
  // Name of an input node.
  const std::string& input_name(int32_t id) const;

  // The layer mark of node `id`, and the one add_node gives new nodes (see LayerMarkScope).
  int32_t layer_mark(int32_t id) const { return marks_.at(static_cast<size_t>(id)); }
  int32_t current_layer_mark() const { return current_mark_; }
  void set_layer_mark(int32_t mark) { current_mark_ = mark; }

 private:
  std::deque<Node> nodes_;
  std::vector<int32_t> inputs_;
  std::vector<int32_t> marks_;  // per node
  int32_t current_mark_ = layer_mark::none;
};

// Gives the nodes built while it lives the mark `mark` (model builders: each layer's index),
// then restores the mark before it.
class LayerMarkScope {
 public:
  LayerMarkScope(Graph& graph, int32_t mark) : graph_(graph), outer_(graph.current_layer_mark()) {
    graph.set_layer_mark(mark);
  }
  ~LayerMarkScope() { graph_.set_layer_mark(outer_); }
  LayerMarkScope(const LayerMarkScope&) = delete;
  LayerMarkScope& operator=(const LayerMarkScope&) = delete;

 private:
  Graph& graph_;
  int32_t outer_;
};

// Readable text dump of the nodes the outputs depend on, one per line:
//   %3 = dot_general(%1, %2) {lhs_contract=[1], rhs_contract=[0]} : f32(4,2)
std::string graph_dump(const Graph& graph, const std::vector<Value>& outputs);

// Structural hash of what the outputs compute: equal for graphs built the same way, whatever
// the node addresses, ids of unrelated nodes, or input names; different when an op, attribute,
// dtype, shape, edge or constant differs.
uint64_t graph_fingerprint(const Graph& graph, const std::vector<Value>& outputs);

// The same hash (FNV-1a, 64 bits) of plain bytes: names and checksums of files that caches keep.
uint64_t bytes_fingerprint(std::string_view bytes);

// Ids of the nodes the outputs depend on, in topological (increasing id) order.
std::vector<int32_t> live_nodes(const Graph& graph, const std::vector<Value>& outputs);

}  // namespace kiln
