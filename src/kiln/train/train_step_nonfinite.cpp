// The diagnosis of an update whose loss or gradient norm is NaN or infinite: the first tensor,
// in graph order, that holds such a value. Runs only after a non-finite update, so the normal
// step programs stay as they are.
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "kiln/ir/dtype.h"
#include "kiln/train/train_step.h"

namespace kiln {
namespace {

// Outputs per diagnostic program: bounds the memory of the tensors it returns at once.
constexpr size_t kOutputsPerRun = 256;

// "3 NaN, 1 infinite of 512 values, the first at element 17"; empty when all are finite.
std::string nonfinite_summary(const Tensor& tensor) {
  if (!is_floating(tensor.dtype())) return "";
  int64_t nans = 0, infinities = 0, first = -1;
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    double value = tensor.get(i);
    if (std::isfinite(value)) continue;
    (std::isnan(value) ? nans : infinities) += 1;
    if (first < 0) first = i;
  }
  if (first < 0) return "";
  std::ostringstream out;
  out << nans << " NaN and " << infinities << " infinite of " << tensor.numel()
      << " values, the first at element " << first;
  return out.str();
}

std::string type_of(const Node& node) {
  return std::string(dtype_name(node.dtype)) + shape_str(node.shape);
}

// "%57 = layer_norm(%55, 'bert.embeddings.LayerNorm.weight') : f32(4,16,8)", inputs by name.
std::string describe_node(const Graph& graph, int32_t id) {
  const Node& node = graph.node(id);
  std::ostringstream out;
  out << '%' << id << " = " << op_name(node.op) << '(';
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    int32_t input = node.inputs[i];
    out << (i ? ", " : "");
    if (graph.node(input).op == OpKind::input) {
      out << '\'' << graph.input_name(input) << '\'';
    } else {
      out << '%' << input << ' ' << op_name(graph.node(input).op);
    }
  }
  out << ") : " << type_of(node);
  return out.str();
}

}  // namespace

std::string TrainStep::first_nonfinite(const std::vector<Tensor>& arguments) {
  // The step's inputs first: weights or optimizer state that already hold NaN, a bad feed.
  std::unordered_map<int32_t, size_t> argument_of;
  for (size_t i = 0; i < graph_.inputs().size(); ++i) argument_of[graph_.inputs()[i]] = i;
  std::vector<int32_t> computed;
  for (int32_t id : live_nodes(graph_, {loss_, grad_norm_})) {
    const Node& node = graph_.node(id);
    if (node.op == OpKind::input) {
      std::string summary = nonfinite_summary(arguments.at(argument_of.at(id)));
      if (!summary.empty()) {
        return "input '" + graph_.input_name(id) + "' " + type_of(node) + ": " + summary;
      }
    } else if (node.op != OpKind::constant && is_floating(node.dtype)) {
      computed.push_back(id);
    }
  }
  // Then the computed tensors in increasing id (topological) order, a window at a time.
  for (size_t start = 0; start < computed.size(); start += kOutputsPerRun) {
    std::vector<Value> outputs;
    for (size_t i = start; i < std::min(computed.size(), start + kOutputsPerRun); ++i) {
      outputs.push_back(graph_.value(computed[i]));
    }
    std::vector<Tensor> values = runtime_.backend().compile(graph_, outputs)->run(arguments);
    for (size_t i = 0; i < values.size(); ++i) {
      std::string summary = nonfinite_summary(values[i]);
      if (summary.empty()) continue;
      const int32_t id = outputs[i].id();
      const char* pass = id <= loss_.id() ? "forward" : "backward";
      return "tensor " + describe_node(graph_, id) + " (" + pass + "): " + summary;
    }
  }
  return "";
}

std::string TrainStep::diagnose(const TrainState& state, const ReplicaFeeds& feeds,
                                double learning_rate, double loss_scale) {
  for (size_t r = 0; r < feeds.size(); ++r) {
    std::string found =
        first_nonfinite(host_arguments(state, feeds[r], learning_rate, loss_scale));
    if (!found.empty()) {
      return feeds.size() > 1 ? found + " (replica " + std::to_string(r) + ")" : found;
    }
  }
  // The diagnostic runs computed everything finite: the backend's fused step program differs.
  return "no tensor of a diagnostic run of the step is non-finite (the loss or the gradient "
         "norm overflowed in the compiled step)";
}

}  // namespace kiln
