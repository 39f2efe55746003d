// graph_dump: the readable text form of the nodes some outputs depend on.
#include <algorithm>
#include <sstream>
#include <type_traits>

#include "kiln/ir/graph.h"
#include "kiln/ir/ops_internal.h"

namespace kiln {
namespace {

constexpr int64_t kConstantValuesShown = 4;

std::string_view role_name(InputRole role) {
  switch (role) {
    case InputRole::data:
      return "data";
    case InputRole::weight:
      return "weight";
    case InputRole::state:
      return "state";
  }
  return "?";
}

void print_element(std::ostream& out, const Tensor& tensor, int64_t i) {
  if (tensor.dtype() == DType::boolean) {
    out << (tensor.get(i) != 0.0 ? "true" : "false");
  } else if (tensor.dtype() == DType::i64) {
    out << tensor.data_as<int64_t>()[i];  // exact beyond 2^53
  } else {
    out << tensor.get(i);
  }
}

// A scalar prints as its value; anything else as its first few values.
void print_constant(std::ostream& out, const Tensor& tensor) {
  if (tensor.rank() == 0) {
    print_element(out, tensor, 0);
    return;
  }
  out << '[';
  int64_t shown = std::min(tensor.numel(), kConstantValuesShown);
  for (int64_t i = 0; i < shown; ++i) {
    if (i) out << ", ";
    print_element(out, tensor, i);
  }
  if (tensor.numel() > shown) out << ", ...";
  out << ']';
}

// "name=value" per attribute; empty lists are left out (dot_general without batch dims).
std::vector<std::string> attr_fields(const Attrs& attrs) {
  std::vector<std::string> fields;
  auto add = [&](const char* name, const auto& value) {
    std::ostringstream field;
    field << name << '=' << value;
    fields.push_back(field.str());
  };
  auto add_list = [&](const char* name, const std::vector<int64_t>& values) {
    if (!values.empty()) add(name, detail::list_str(values));
  };
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, IotaAttrs>) {
          add("dim", a.dim);
        } else if constexpr (std::is_same_v<A, RandomBitsAttrs>) {
          add("stream", a.stream);
        } else if constexpr (std::is_same_v<A, CompareAttrs>) {
          add("dir", compare_dir_name(a.dir));
        } else if constexpr (std::is_same_v<A, BroadcastAttrs>) {
          add_list("dims", a.dims);
        } else if constexpr (std::is_same_v<A, TransposeAttrs>) {
          add_list("perm", a.perm);
        } else if constexpr (std::is_same_v<A, SliceAttrs>) {
          add_list("start", a.start);
          add_list("limit", a.limit);
          add_list("stride", a.stride);
        } else if constexpr (std::is_same_v<A, ConcatAttrs> || std::is_same_v<A, GatherAttrs> ||
                             std::is_same_v<A, SoftmaxAttrs>) {
          add("axis", a.axis);
        } else if constexpr (std::is_same_v<A, PadAttrs>) {
          add_list("low", a.low);
          add_list("high", a.high);
          add("value", a.value);
        } else if constexpr (std::is_same_v<A, ReduceAttrs>) {
          add_list("axes", a.axes);
        } else if constexpr (std::is_same_v<A, DotAttrs>) {
          add_list("lhs_batch", a.lhs_batch);
          add_list("rhs_batch", a.rhs_batch);
          add_list("lhs_contract", a.lhs_contract);
          add_list("rhs_contract", a.rhs_contract);
        } else if constexpr (std::is_same_v<A, LayerNormAttrs>) {
          add("eps", a.eps);
        } else if constexpr (std::is_same_v<A, CrossEntropyAttrs>) {
          add("ignore_index", a.ignore_index);
        } else if constexpr (std::is_same_v<A, AttentionAttrs>) {
          add("scale", a.scale);
          if (a.dropout_rate > 0.0) {
            add("dropout_rate", a.dropout_rate);
            add("stream", a.stream);
          }
          if (a.layout == AttentionLayout::seq_first) add("layout", "seq_first");
        } else if constexpr (std::is_same_v<A, DropoutAttrs>) {
          add("rate", a.rate);
          add("stream", a.stream);
        }
        // NoAttrs has nothing; input and constant attributes are printed by print_node.
      },
      attrs);
  return fields;
}

void print_node(std::ostream& out, const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  out << '%' << id << " = " << op_name(node.op);
  if (node.op == OpKind::input) {
    const auto& attrs = node.attr<InputAttrs>();
    out << " \"" << attrs.name << "\" " << role_name(attrs.role);
  } else if (node.op == OpKind::constant) {
    out << ' ';
    print_constant(out, node.attr<ConstantAttrs>().value);
  } else {
    out << '(';
    for (size_t i = 0; i < node.inputs.size(); ++i) out << (i ? ", %" : "%") << node.inputs[i];
    out << ')';
    std::vector<std::string> fields = attr_fields(node.attrs);
    for (size_t i = 0; i < fields.size(); ++i) out << (i ? ", " : " {") << fields[i];
    if (!fields.empty()) out << '}';
  }
  out << " : " << detail::type_str(node.dtype, node.shape) << '\n';
}

}  // namespace

std::string graph_dump(const Graph& graph, const std::vector<Value>& outputs) {
  std::ostringstream out;
  for (int32_t id : live_nodes(graph, outputs)) print_node(out, graph, id);
  out << "return";
  for (size_t i = 0; i < outputs.size(); ++i) out << (i ? ", %" : " %") << outputs[i].id();
  out << '\n';
  return out.str();
}

}  // namespace kiln
