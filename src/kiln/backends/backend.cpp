// Argument checks shared by every backend, and the default of the optional serialization hook.
#include "kiln/backends/backend.h"

#include "kiln/ir/error.h"

namespace kiln {

void check_arguments(const Graph& graph, const std::vector<Tensor>& arguments) {
  const std::vector<int32_t>& inputs = graph.inputs();
  check(arguments.size() == inputs.size(), "run", "expected ", inputs.size(), " arguments, got ",
        arguments.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Node& node = graph.node(inputs[i]);
    const Tensor& argument = arguments[i];
    check(argument.dtype() == node.dtype && argument.shape() == node.shape, "run",
          "input '", graph.input_name(inputs[i]), "' expects ", dtype_name(node.dtype),
          shape_str(node.shape), ", got ", dtype_name(argument.dtype()),
          shape_str(argument.shape()));
  }
}

std::unique_ptr<Executable> Backend::deserialize(const std::string&, const Graph&,
                                                 const std::vector<Value>&, const CompileSpec&) {
  fail("deserialize", "the ", name(), " backend does not serialize executables");
}

}  // namespace kiln
