// The pipeline: the passes in order, each logged with the node counts before and after.
#include "kiln/compiler/pipeline.h"

#include <string>

#include "kiln/compiler/passes.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

std::string node_count_line(std::string_view pass, const Module& before, const Module& after) {
  return std::string(pass) + ": " + std::to_string(before.graph->size()) + " -> " +
         std::to_string(after.graph->size()) + " nodes";
}

// The requested donations that can be honoured: same dtype and shape, each input and each output
// donated at most once.
std::vector<Donation> honoured_donations(const Module& module,
                                         const std::vector<Donation>& requests,
                                         const CompileOptions& options) {
  std::vector<Donation> honoured;
  if (!options.in_place) return honoured;
  const Graph& graph = *module.graph;
  std::vector<bool> input_taken(graph.inputs().size(), false);
  std::vector<bool> output_taken(module.outputs.size(), false);
  for (const Donation& request : requests) {
    auto input = static_cast<size_t>(request.input);
    auto output = static_cast<size_t>(request.output);
    check(input < input_taken.size() && output < output_taken.size(), "compiler",
          "donation of input ", request.input, " to output ", request.output, " is out of range");
    const Node& from = graph.node(graph.inputs()[input]);
    const Node& to = graph.node(module.outputs[output]);
    if (input_taken[input] || output_taken[output] || from.dtype != to.dtype ||
        from.shape != to.shape) {
      continue;
    }
    input_taken[input] = output_taken[output] = true;
    honoured.push_back(request);
  }
  return honoured;
}

}  // namespace

Program compile_program(const Graph& graph, const std::vector<Value>& outputs,
                        const std::vector<Donation>& donations,
                        const BackendCapabilities& capabilities, const CompileOptions& options) {
  Program program;
  Module module = copy_module(graph, outputs, options.dead_code);
  auto step = [&](std::string_view name, bool enabled, auto&& pass) {
    if (!enabled) return;
    Module next = pass(module);
    program.log.push_back(node_count_line(name, module, next));
    module = std::move(next);
  };
  step("decompose", true, [&](const Module& m) {
    return decompose_composites(m, capabilities, options);
  });
  step("bf16", options.bf16, [&](const Module& m) {
    return use_bf16_matmuls(m, capabilities.bf16_products);
  });
  step("fold", options.constant_folding, fold_constants);
  step("simplify", options.simplification, [&](const Module& m) {
    return simplify(m, capabilities.dots_read_strided_operands);
  });
  step("cse", options.common_subexpressions, eliminate_common_subexpressions);
  step("checkpoint", options.gradient_checkpointing, recompute_layers);
  step("dce", options.dead_code, eliminate_dead_code);
  program.donations = honoured_donations(module, donations, options);
  bool fuse = options.fusion && (capabilities.loop_fusion || capabilities.gemm_epilogues);
  program.kernels = fuse ? fuse_kernels(module, capabilities) : single_node_kernels(module);
  std::vector<Donation> safe = schedule_kernels(module, program.kernels, program.donations);
  if (!capabilities.aliases_donations_itself) program.donations = std::move(safe);
  program.module = std::move(module);
  return program;
}

}  // namespace kiln
