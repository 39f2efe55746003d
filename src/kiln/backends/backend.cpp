// Argument checks shared by every backend, the host backends' buffers, and the default of the
// optional serialization hook.
#include "kiln/backends/backend.h"

#include <utility>

#include "kiln/ir/error.h"

namespace kiln {

namespace {

// Tensors and buffers alike: count, then each input's dtype and shape.
template <typename Argument, typename TypeOf>
void check_argument_types(const Graph& graph, const std::vector<Argument>& arguments,
                          TypeOf type_of) {
  const std::vector<int32_t>& inputs = graph.inputs();
  check(arguments.size() == inputs.size(), "run", "expected ", inputs.size(), " arguments, got ",
        arguments.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Node& node = graph.node(inputs[i]);
    auto [dtype, shape] = type_of(arguments[i]);
    check(dtype == node.dtype && shape == node.shape, "run", "input '", graph.input_name(inputs[i]),
          "' expects ", dtype_name(node.dtype), shape_str(node.shape), ", got ", dtype_name(dtype),
          shape_str(shape));
  }
}

}  // namespace

void check_arguments(const Graph& graph, const std::vector<Tensor>& arguments) {
  check_argument_types(graph, arguments, [](const Tensor& argument) {
    return std::pair<DType, const Shape&>(argument.dtype(), argument.shape());
  });
}

void check_arguments(const Graph& graph, const std::vector<BufferPtr>& arguments) {
  check_argument_types(graph, arguments, [](const BufferPtr& argument) {
    return std::pair<DType, const Shape&>(argument->dtype(), argument->shape());
  });
}

BufferLists Executable::run(const BufferLists& arguments) {
  check(arguments.size() == 1, "run", "this backend runs one replica, not ", arguments.size());
  std::vector<Tensor> tensors;
  tensors.reserve(arguments[0].size());
  for (const BufferPtr& argument : arguments[0]) {
    const auto* host = dynamic_cast<const HostBuffer*>(argument.get());
    check(host != nullptr, "run", "an argument is a buffer of another backend");
    tensors.push_back(host->tensor());
  }
  std::vector<BufferPtr> results;
  for (Tensor& result : run(tensors)) results.push_back(std::make_shared<HostBuffer>(std::move(result)));
  return {std::move(results)};
}

BufferPtr Backend::upload(const Tensor& tensor, int device) {
  check(device == 0, "upload", "the ", name(), " backend has one device, not ", device + 1);
  return std::make_shared<HostBuffer>(tensor.clone());
}

std::unique_ptr<Executable> Backend::deserialize(const std::string&, const Graph&,
                                                 const std::vector<Value>&, const CompileSpec&) {
  fail("deserialize", "the ", name(), " backend does not serialize executables");
}

}  // namespace kiln
