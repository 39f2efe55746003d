// Graph construction.
#include "kiln/ir/graph.h"

#include "kiln/ir/error.h"

namespace kiln {

const Node& Value::node() const {
  check(valid(), "value", "use of an empty Value");
  return graph_->node(id_);
}

int64_t Value::dim(int64_t axis) const {
  return shape()[static_cast<size_t>(normalize_axis(axis, rank(), "value"))];
}

Value Graph::input(std::string name, DType dtype, Shape shape, InputRole role) {
  for (int64_t dim : shape) check(dim >= 0, "input", "'", name, "' has a negative dim in ", shape_str(shape));
  Value value = add_node(OpKind::input, {}, InputAttrs{std::move(name), role}, dtype, std::move(shape));
  inputs_.push_back(value.id());
  return value;
}

Value Graph::add_node(OpKind op, const std::vector<Value>& inputs, Attrs attrs, DType dtype,
                      Shape shape) {
  Node node{op, {}, std::move(attrs), dtype, std::move(shape)};
  node.inputs.reserve(inputs.size());
  for (const Value& input : inputs) {
    check(input.valid() && &input.graph() == this, op_name(op),
          "operand belongs to another graph (or is empty)");
    node.inputs.push_back(input.id());
  }
  nodes_.push_back(std::move(node));
  marks_.push_back(current_mark_);
  return Value(this, size() - 1);
}

const std::string& Graph::input_name(int32_t id) const {
  return std::get<InputAttrs>(node(id).attrs).name;
}

std::vector<int32_t> live_nodes(const Graph& graph, const std::vector<Value>& outputs) {
  std::vector<char> live(static_cast<size_t>(graph.size()), 0);
  for (const Value& output : outputs) {
    check(output.valid() && &output.graph() == &graph, "graph", "output from another graph");
    live[static_cast<size_t>(output.id())] = 1;
  }
  std::vector<int32_t> order;
  for (int32_t id = graph.size() - 1; id >= 0; --id) {
    if (!live[static_cast<size_t>(id)]) continue;
    for (int32_t operand : graph.node(id).inputs) live[static_cast<size_t>(operand)] = 1;
  }
  for (int32_t id = 0; id < graph.size(); ++id) {
    if (live[static_cast<size_t>(id)]) order.push_back(id);
  }
  return order;
}

}  // namespace kiln
