// The module around the lowered nodes: @main's arguments (with their donations), the body in
// node order, and the return of the outputs.
#include <map>

#include "kiln/backends/pjrt/stablehlo_lowering.h"
#include "kiln/ir/error.h"

namespace kiln::pjrt {

std::string lower_to_stablehlo(const Program& program, int replicas) {
  check(replicas >= 1, "stablehlo", "replicas must be at least 1, got ", replicas);
  const Graph& graph = *program.module.graph;
  const std::vector<int32_t>& outputs = program.module.outputs;
  std::map<int32_t, int32_t> aliased_output;  // input position -> output it is donated to
  for (const Donation& donation : program.donations) {
    aliased_output[donation.input] = donation.output;
  }

  StableHloWriter writer;
  std::vector<Ssa> values(static_cast<size_t>(graph.size()));
  std::string arguments;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    int32_t id = graph.inputs()[i];
    const Node& node = graph.node(id);
    Ssa argument{"%arg" + std::to_string(i), element_type(node.dtype), node.shape};
    arguments += (i > 0 ? ",\n      " : "") + argument.name + ": " + tensor_type(argument);
    auto alias = aliased_output.find(static_cast<int32_t>(i));
    if (alias != aliased_output.end()) {
      arguments += " {tf.aliasing_output = " + std::to_string(alias->second) + " : i32}";
    }
    values[static_cast<size_t>(id)] = std::move(argument);
  }

  std::vector<int32_t> live = live_nodes(graph, program.module.output_values());
  for (int32_t id : live) {
    const Node& node = graph.node(id);
    if (node.op == OpKind::input) continue;
    std::vector<Ssa> operands;
    for (int32_t operand : node.inputs) operands.push_back(values[static_cast<size_t>(operand)]);
    values[static_cast<size_t>(id)] = lower_node(writer, node, operands, replicas);
  }

  std::string results, returned, returned_types;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Ssa& value = values[static_cast<size_t>(outputs[i])];
    std::string separator = i > 0 ? ", " : "";
    results += separator + tensor_type(value);
    returned += separator + value.name;
    returned_types += separator + tensor_type(value);
  }
  writer.line("\"func.return\"(" + returned + ") : (" + returned_types + ") -> ()");
  return "module @kiln attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = " +
         std::to_string(replicas) + " : i32} {\n  func.func public @main(" + arguments +
         ")\n      -> (" + results + ") {\n" + writer.text() + "  }\n}\n";
}

}  // namespace kiln::pjrt
