// The CPU executable: compiles the graph, gives every value a buffer (an argument, a constant, an
// output tensor, an alias of its operand for reshapes, or an offset in the arena planned from
// liveness), builds one kernel per remaining node, and runs them in order.
#include "kiln/backends/cpu/cpu_backend.h"

#include <cstring>

#include "kiln/backends/cpu/kernel.h"
#include "kiln/compiler/pipeline.h"
#include "kiln/ir/error.h"
#include "kiln/ir/op_registry.h"

namespace kiln {
namespace {

using cpu::Buffers;
using cpu::Kernel;

constexpr int64_t kAlignment = 64;

// Where a buffer lives; aliases (reshapes) share their operand's buffer.
enum class Home : uint8_t { argument, constant, output, arena };

struct Step {
  int32_t id;
  Kernel kernel;
  int64_t scratch_offset = 0;
};

class CpuExecutableImpl : public CpuExecutable {
 public:
  explicit CpuExecutableImpl(Program program)
      : module_(std::move(program.module)) {
    const Graph& graph = *module_.graph;
    auto count = static_cast<size_t>(graph.size());
    root_.assign(count, -1);
    home_.assign(count, Home::arena);
    buffers_.slot.assign(count, nullptr);
    for (int32_t id = 0; id < graph.size(); ++id) assign_home(graph, id);
    claim_outputs();
    build_steps(graph, program.kernels);
    plan_arena(graph);
  }

  const cpu::MemoryPlan& memory_plan() const override { return plan_; }
  int64_t kernel_count() const override { return static_cast<int64_t>(steps_.size()); }
  ExecutableStats stats() const override { return {kernel_count(), plan_.arena_bytes}; }

  std::vector<Tensor> run(const std::vector<Tensor>& arguments) override {
    const Graph& graph = *module_.graph;
    check_arguments(graph, arguments);
    for (size_t i = 0; i < arguments.size(); ++i) {
      const Tensor& argument = arguments[i];
      int32_t input = graph.inputs()[i];
      size_t bytes = static_cast<size_t>(argument.numel()) * dtype_size(argument.dtype());
      check(argument.nbytes() == bytes, "run", "input '", graph.input_name(input), "' has no data");
      // Kernels never write their operands, so arguments are read where they are.
      buffers_.slot[static_cast<size_t>(input)] =
          argument.nbytes() ? const_cast<std::byte*>(argument.data()) : nullptr;
    }
    std::vector<Tensor> results(module_.outputs.size());
    for (size_t i = 0; i < results.size(); ++i) {
      int32_t id = module_.outputs[i];
      if (claimed_[i]) {
        results[i] = Tensor::uninitialized(graph.node(id).dtype, graph.node(id).shape);
        buffers_.slot[static_cast<size_t>(root(id))] = results[i].data();
      }
    }
    for (int32_t id = 0; id < graph.size(); ++id) {
      buffers_.slot[static_cast<size_t>(id)] = buffers_.slot[static_cast<size_t>(root(id))];
    }
    for (const Step& step : steps_) step.kernel.run(buffers_, arena_base_ + step.scratch_offset);
    for (size_t i = 0; i < results.size(); ++i) {
      if (claimed_[i]) continue;
      int32_t id = module_.outputs[i];
      results[i] = Tensor::uninitialized(graph.node(id).dtype, graph.node(id).shape);
      if (results[i].nbytes()) {
        std::memcpy(results[i].data(), buffers_.slot[static_cast<size_t>(id)], results[i].nbytes());
      }
    }
    return results;
  }

 private:
  int32_t root(int32_t id) const { return root_[static_cast<size_t>(id)]; }

  void assign_home(const Graph& graph, int32_t id) {
    const Node& node = graph.node(id);
    auto index = static_cast<size_t>(id);
    root_[index] = id;
    if (node.op == OpKind::input) {
      home_[index] = Home::argument;
    } else if (node.op == OpKind::constant) {
      home_[index] = Home::constant;
      // The lowered graph owns the constant's bytes; kernels only read them.
      const Tensor& value = node.attr<ConstantAttrs>().value;
      buffers_.slot[index] = value.nbytes() ? const_cast<std::byte*>(value.data()) : nullptr;
    } else if (node.op == OpKind::reshape) {
      root_[index] = root(node.inputs[0]);  // row-major data is the same bytes
    }
  }

  // The first output whose buffer is a kernel's result gets that buffer as its tensor; the others
  // (arguments, constants, a buffer already taken) are copied after the run.
  void claim_outputs() {
    claimed_.assign(module_.outputs.size(), false);
    for (size_t i = 0; i < module_.outputs.size(); ++i) {
      auto r = static_cast<size_t>(root(module_.outputs[i]));
      if (home_[r] != Home::arena) continue;
      home_[r] = Home::output;
      claimed_[i] = true;
    }
  }

  void build_steps(const Graph& graph, const std::vector<KernelGroup>& kernels) {
    for (const KernelGroup& group : kernels) {
      int32_t id = group.nodes.front();
      const Node& node = graph.node(id);
      cpu::KernelMaker maker = cpu::kernel_maker(node.op);
      check(maker != nullptr, op_name(node.op), "the CPU backend has no kernel for node %", id);
      steps_.push_back({id, maker(graph, id)});
    }
  }

  // One buffer per arena root, live from its producing step to the last step reading it or any
  // of its aliases, plus each step's scratch, live during its step only.
  void plan_arena(const Graph& graph) {
    std::vector<int32_t> step_of(static_cast<size_t>(graph.size()), -1);
    std::vector<int32_t> last_use(static_cast<size_t>(graph.size()), -1);
    for (size_t s = 0; s < steps_.size(); ++s) {
      auto step = static_cast<int32_t>(s);
      step_of[static_cast<size_t>(steps_[s].id)] = step;
      for (int32_t operand : graph.node(steps_[s].id).inputs) {
        last_use[static_cast<size_t>(root(operand))] = step;
      }
    }
    std::vector<cpu::BufferRequest> requests;
    std::vector<int32_t> owner;  // node id, or -1 - step for a scratch buffer
    for (const Step& step : steps_) {
      auto index = static_cast<size_t>(step.id);
      int32_t s = step_of[index];
      if (home_[index] == Home::arena) {
        int64_t bytes = shape_numel(graph.node(step.id).shape) *
                        static_cast<int64_t>(dtype_size(graph.node(step.id).dtype));
        requests.push_back({bytes, s, std::max(s, last_use[index])});
        owner.push_back(step.id);
      }
      if (step.kernel.scratch_bytes > 0) {
        requests.push_back({step.kernel.scratch_bytes, s, s});
        owner.push_back(-1 - s);
      }
    }
    plan_ = cpu::plan_memory(std::move(requests), kAlignment);
    arena_.assign(static_cast<size_t>(plan_.arena_bytes + kAlignment), std::byte{0});
    auto address = reinterpret_cast<uintptr_t>(arena_.data());
    arena_base_ = arena_.data() + (kAlignment - address % kAlignment) % kAlignment;
    for (size_t b = 0; b < owner.size(); ++b) {
      if (owner[b] >= 0) {
        buffers_.slot[static_cast<size_t>(owner[b])] = arena_base_ + plan_.offsets[b];
      } else {
        steps_[static_cast<size_t>(-1 - owner[b])].scratch_offset = plan_.offsets[b];
      }
    }
  }

  Module module_;
  std::vector<int32_t> root_;  // node id -> the node whose buffer it uses
  std::vector<Home> home_;     // of root nodes
  std::vector<bool> claimed_;  // per output: its tensor is its root's buffer
  std::vector<Step> steps_;
  cpu::MemoryPlan plan_;
  std::vector<std::byte> arena_;
  std::byte* arena_base_ = nullptr;
  Buffers buffers_;
};

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(CpuBackendOptions options) : options_(options) {}

  std::string_view name() const override { return "cpu"; }

  // Composites without a kernel run through their decomposition, so every op is accepted.
  bool supports(const Node& node) const override {
    return cpu::kernel_maker(node.op) != nullptr || node.op == OpKind::input ||
           node.op == OpKind::constant || node.op == OpKind::reshape ||
           op_info(node.op).category == OpCategory::composite;
  }

  std::unique_ptr<Executable> compile(const Graph& graph, const std::vector<Value>& outputs,
                                      const CompileSpec& spec) override {
    CompileOptions options = spec.options;
    options.decompose_composites |= options_.decompose_composites;
    BackendCapabilities capabilities{
        [](OpKind op) { return cpu::kernel_maker(op) != nullptr; }};
    return std::make_unique<CpuExecutableImpl>(
        compile_program(graph, outputs, spec.donations, capabilities, options));
  }

 private:
  CpuBackendOptions options_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(CpuBackendOptions options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace kiln
