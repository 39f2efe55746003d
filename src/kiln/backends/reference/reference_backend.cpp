// The reference backend: evaluates the live nodes in id order with one kernel per op, freeing
// each intermediate once its last user has run.
#include "kiln/backends/reference/reference_backend.h"

#include "kiln/compiler/pipeline.h"
#include "kiln/ir/error.h"
#include "kiln/reference_kernels/kernels.h"

namespace kiln {
namespace {

class ReferenceExecutable : public Executable {
 public:
  ReferenceExecutable(Module module, std::vector<int32_t> live)
      : module_(std::move(module)),
        graph_(*module_.graph),
        live_(std::move(live)),
        outputs_(module_.outputs),
        argument_of_(static_cast<size_t>(graph_.size()), -1) {
    const Graph& graph = graph_;
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
      argument_of_[static_cast<size_t>(graph.inputs()[i])] = static_cast<int64_t>(i);
    }
    // After step s, free the operands whose last user is step s (outputs are never freed).
    std::vector<int64_t> last_use(static_cast<size_t>(graph.size()), -1);
    for (size_t step = 0; step < live_.size(); ++step) {
      for (int32_t operand : graph.node(live_[step]).inputs) {
        last_use[static_cast<size_t>(operand)] = static_cast<int64_t>(step);
      }
    }
    for (int32_t id : outputs_) last_use[static_cast<size_t>(id)] = -1;
    free_after_.resize(live_.size());
    for (int32_t id : live_) {
      int64_t step = last_use[static_cast<size_t>(id)];
      if (step >= 0) free_after_[static_cast<size_t>(step)].push_back(id);
    }
  }

  std::vector<Tensor> run(const std::vector<Tensor>& arguments) override {
    check_arguments(graph_, arguments);
    std::vector<Tensor> values(static_cast<size_t>(graph_.size()));
    std::vector<Tensor> operands;
    for (size_t step = 0; step < live_.size(); ++step) {
      int32_t id = live_[step];
      const Node& node = graph_.node(id);
      operands.clear();
      if (node.op == OpKind::input) {
        operands.push_back(arguments[static_cast<size_t>(argument_of_[static_cast<size_t>(id)])]);
      }
      for (int32_t operand : node.inputs) operands.push_back(values[static_cast<size_t>(operand)]);
      values[static_cast<size_t>(id)] = reference::evaluate_node(node, id, operands);
      operands.clear();
      for (int32_t dead : free_after_[step]) values[static_cast<size_t>(dead)] = Tensor();
    }
    std::vector<Tensor> results;
    for (int32_t id : outputs_) results.push_back(values[static_cast<size_t>(id)]);
    return results;
  }

  ExecutableStats stats() const override { return {static_cast<int64_t>(live_.size()), 0}; }

 private:
  Module module_;
  const Graph& graph_;
  std::vector<int32_t> live_;
  std::vector<int32_t> outputs_;
  std::vector<int64_t> argument_of_;  // node id -> argument position (inputs only)
  std::vector<std::vector<int32_t>> free_after_;
};

class ReferenceBackend : public Backend {
 public:
  std::string_view name() const override { return "reference"; }

  // The kernel table covers the whole op list (kernel_table.cpp); only a corrupt op is refused.
  bool supports(const Node& node) const override {
    return static_cast<int>(node.op) < kNumOps;
  }

  // Runs the graph as built: only the options that change results apply.
  std::unique_ptr<Executable> compile(const Graph& graph, const std::vector<Value>& outputs,
                                      const CompileSpec& spec) override {
    BackendCapabilities capabilities{[](OpKind) { return true; }};
    Program program =
        compile_program(graph, outputs, {}, capabilities, spec.options.semantics_only());
    const Graph& compiled = *program.module.graph;
    std::vector<int32_t> live = live_nodes(compiled, program.module.output_values());
    for (int32_t id : live) {
      check(supports(compiled.node(id)), "reference", "no kernel for node %", id, " (op number ",
            static_cast<int>(compiled.node(id).op), ")");
    }
    return std::make_unique<ReferenceExecutable>(std::move(program.module), std::move(live));
  }
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend() { return std::make_unique<ReferenceBackend>(); }

std::vector<Tensor> evaluate_reference(const Graph& graph, const std::vector<Value>& outputs,
                                       const std::vector<Tensor>& arguments) {
  return make_reference_backend()->compile(graph, outputs)->run(arguments);
}

}  // namespace kiln
