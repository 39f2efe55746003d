// The CPU executable: compiles the graph into kernel groups, builds one kernel per group (a fused
// loop, a oneDNN matmul with its epilogue, or an op's own kernel), places every value the plan of
// kiln/compiler/buffer_plan.h gives a buffer (an argument, a constant, an output tensor, a
// donated argument, an offset in the arena), and runs the kernels in order.
#include "kiln/backends/cpu/cpu_backend.h"

#include <chrono>
#include <cstring>
#include <memory>

#include "kiln/backends/cpu/arena_memory.h"
#include "kiln/backends/cpu/bf16_products.h"
#include "kiln/backends/cpu/collectives.h"
#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/backends/cpu/kernel.h"
#include "kiln/backends/cpu/kernel_profile.h"
#include "kiln/compiler/pipeline.h"
#include "kiln/ir/error.h"
#include "kiln/ir/op_registry.h"

namespace kiln {
namespace {

using cpu::Buffers;
using cpu::Kernel;

constexpr int64_t kAlignment = 64;

Kernel make_kernel(const Graph& graph, const KernelGroup& group) {
  switch (group.kind) {
    case KernelKind::loop: return cpu::make_loop_kernel(graph, group);
    case KernelKind::gemm: return cpu::make_gemm_kernel(graph, group);
    case KernelKind::single: break;
  }
  int32_t id = group.nodes.back();  // after the broadcasts it reads in place
  const Node& node = graph.node(id);
  if (cpu::runs_in_loops(node.op)) return cpu::make_loop_kernel(graph, group);
  cpu::KernelMaker maker = cpu::kernel_maker(node.op);
  check(maker != nullptr, op_name(node.op), "the CPU backend has no kernel for node %", id);
  return maker(graph, id);
}

class CpuExecutableImpl : public CpuExecutable {
 public:
  CpuExecutableImpl(Program program, dist::Communicator& communicator)
      : program_(std::move(program)), profile_(program_) {
    const Graph& graph = *program_.module.graph;
    std::vector<int64_t> scratch;
    for (const KernelGroup& group : program_.kernels) {
      kernels_.push_back(make_kernel(graph, group));
      scratch.push_back(kernels_.back().scratch_bytes);
    }
    plan_ = plan_buffers(program_, scratch, kAlignment);
    if (communicator.size() > 1) {
      collectives_ = std::make_unique<cpu::Collectives>(program_, plan_, communicator);
      for (size_t k = 0; k < kernels_.size(); ++k) {
        if (collectives_->reduces(k)) kernels_[k] = collectives_->kernel(k);
      }
    }
    // Not zero-filled: every kernel writes its buffers before anything reads them, and filling
    // a BERT-base step's 1.6 GB arena took most of its compile time (its pages are touched on
    // the first run instead).
    arena_ = cpu::allocate_arena(static_cast<size_t>(plan_.plan.arena_bytes));
    buffers_.slot.assign(static_cast<size_t>(graph.size()), nullptr);
    for (int32_t id = 0; id < graph.size(); ++id) {
      auto index = static_cast<size_t>(id);
      int32_t root = plan_.root[index];
      if (root != id) aliases_.push_back({id, root, plan_.root_offset[index]});
      if (root != id) continue;
      switch (plan_.home[index]) {
        case BufferHome::constant: {
          // The module owns the constant's bytes; kernels only read them.
          const Tensor& value = graph.node(id).attr<ConstantAttrs>().value;
          buffers_.slot[index] = value.nbytes() ? const_cast<std::byte*>(value.data()) : nullptr;
          break;
        }
        case BufferHome::arena: buffers_.slot[index] = arena_.get() + plan_.offset[index]; break;
        case BufferHome::output: owned_outputs_.push_back(id); break;
        case BufferHome::donated: donated_outputs_.push_back(id); break;
        case BufferHome::none: case BufferHome::argument: break;
      }
    }
    for (size_t o = 0; o < program_.module.outputs.size(); ++o) {
      auto root = static_cast<size_t>(plan_.root[static_cast<size_t>(program_.module.outputs[o])]);
      bool has_tensor = (plan_.home[root] == BufferHome::output ||
                         plan_.home[root] == BufferHome::donated) &&
                        plan_.output[root] == static_cast<int32_t>(o);
      if (!has_tensor) copied_outputs_.push_back(o);
    }
  }

  const MemoryPlan& memory_plan() const override { return plan_.plan; }
  int64_t kernel_count() const override { return static_cast<int64_t>(kernels_.size()); }
  const Program& program() const override { return program_; }
  ExecutableStats stats() const override {
    auto compiled = std::count_if(kernels_.begin(), kernels_.end(),
                                  [](const Kernel& kernel) { return kernel.compiled; });
    return {kernel_count(), plan_.plan.arena_bytes, compiled};
  }

  std::vector<Tensor> run(const std::vector<Tensor>& arguments) override {
    const Graph& graph = *program_.module.graph;
    check_arguments(graph, arguments);
    for (size_t i = 0; i < arguments.size(); ++i) {
      const Tensor& argument = arguments[i];
      int32_t input = graph.inputs()[i];
      size_t bytes = static_cast<size_t>(argument.numel()) * dtype_size(argument.dtype());
      check(argument.nbytes() == bytes, "run", "input '", graph.input_name(input), "' has no data");
      // Kernels never write their operands: arguments are read where they are, and written only
      // when donated.
      buffers_.slot[static_cast<size_t>(input)] =
          argument.nbytes() ? const_cast<std::byte*>(argument.data()) : nullptr;
    }
    std::vector<Tensor> results(program_.module.outputs.size());
    for (int32_t id : owned_outputs_) {
      auto index = static_cast<size_t>(id);
      auto output = static_cast<size_t>(plan_.output[index]);
      const Node& node = graph.node(program_.module.outputs[output]);  // the root, or a reshape
      Tensor& result = results[output];
      result = Tensor::uninitialized(node.dtype, node.shape);
      buffers_.slot[index] = result.nbytes() ? result.data() : nullptr;
    }
    for (int32_t id : donated_outputs_) {
      auto index = static_cast<size_t>(id);
      const Tensor& argument = arguments[static_cast<size_t>(plan_.argument[index])];
      results[static_cast<size_t>(plan_.output[index])] = argument;  // shares its bytes
      buffers_.slot[index] = buffers_.slot[static_cast<size_t>(graph.inputs()[static_cast<size_t>(
          plan_.argument[index])])];
    }
    for (const Alias& alias : aliases_) {
      std::byte* bytes = buffers_.slot[static_cast<size_t>(alias.root)];
      buffers_.slot[static_cast<size_t>(alias.view)] = bytes ? bytes + alias.offset : nullptr;
    }
    if (profile_.enabled()) {
      run_kernels_timed();
    } else {
      for (size_t k = 0; k < kernels_.size(); ++k) {
        if (collectives_) collectives_->before(k, buffers_);
        kernels_[k].run(buffers_, arena_.get() + plan_.scratch_offset[k]);
      }
    }
    if (collectives_) collectives_->after_run(buffers_);
    // Outputs that are arguments, constants or a buffer another output took are copies.
    for (size_t o : copied_outputs_) {
      int32_t id = program_.module.outputs[o];
      results[o] = Tensor::uninitialized(graph.node(id).dtype, graph.node(id).shape);
      if (results[o].nbytes()) {
        std::memcpy(results[o].data(), buffers_.slot[static_cast<size_t>(id)], results[o].nbytes());
      }
    }
    return results;
  }

 private:
  void run_kernels_timed() {
    for (size_t k = 0; k < kernels_.size(); ++k) {
      auto start = std::chrono::steady_clock::now();
      if (collectives_) collectives_->before(k, buffers_);
      kernels_[k].run(buffers_, arena_.get() + plan_.scratch_offset[k]);
      profile_.add(k, std::chrono::steady_clock::now() - start);
    }
    profile_.finish_run();
  }

  Program program_;
  cpu::KernelProfile profile_;
  std::vector<Kernel> kernels_;
  ProgramBuffers plan_;
  struct Alias {
    int32_t view, root;  // a view (views.h) and the node whose bytes it is
    int64_t offset;      // where the view starts in them
  };
  std::vector<Alias> aliases_;
  std::vector<int32_t> owned_outputs_, donated_outputs_;  // roots
  std::vector<size_t> copied_outputs_;
  cpu::ArenaBytes arena_;
  Buffers buffers_;
  std::unique_ptr<cpu::Collectives> collectives_;  // a run of several processes
};

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(CpuBackendOptions options) : options_(options) {}

  std::string_view name() const override { return "cpu"; }

  // Composites without a kernel run through their decomposition, so every op is accepted.
  bool supports(const Node& node) const override {
    return cpu::kernel_maker(node.op) != nullptr || cpu::runs_in_loops(node.op) ||
           node.op == OpKind::input ||
           node.op == OpKind::constant || node.op == OpKind::reshape ||
           op_info(node.op).category == OpCategory::composite;
  }

  std::unique_ptr<Executable> compile(const Graph& graph, const std::vector<Value>& outputs,
                                      const CompileSpec& spec) override {
    CompileOptions options = spec.options;
    options.decompose_composites |= options_.decompose_composites;
    BackendCapabilities capabilities{[](OpKind op) {
                                       return cpu::kernel_maker(op) != nullptr ||
                                              cpu::runs_in_loops(op);
                                     }};
    capabilities.loop_fusion = capabilities.gemm_epilogues = true;
    capabilities.dots_read_strided_operands = true;
    capabilities.bf16_products = bf16_products(options);
    return std::make_unique<CpuExecutableImpl>(
        compile_program(graph, outputs, spec.donations, capabilities, options),
        options_.communicator != nullptr ? *options_.communicator : dist::world());
  }

 private:
  bool bf16_products(const CompileOptions& options) const {
    if (options_.bf16_products) return *options_.bf16_products;
    if (!options.bf16) return true;  // no bf16 products asked for: nothing to say
    bool native = cpu::cpu_has_bf16_products();
    if (!native) cpu::print_bf16_rounding_notice_once();
    return native;
  }

  CpuBackendOptions options_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(CpuBackendOptions options) {
  cpu::cap_onednn_isa();  // before any kernel is built: oneDNN's first primitive fixes its ISA
  return std::make_unique<CpuBackend>(options);
}

}  // namespace kiln
