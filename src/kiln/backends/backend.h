// The backend contract: what every executor of graphs (reference, CPU, CUDA, PJRT) provides.
//
// A backend compiles the part of a graph that the outputs depend on into an Executable, which
// then only runs. Arguments are host tensors in the graph's input order (Graph::inputs());
// results come back in output order. Backends that optimise run the compiler pipeline
// (kiln/compiler/pipeline.h) with the options of the CompileSpec; the reference backend runs the
// graph as built, applying only what changes results (CompileOptions::semantics_only()).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/compiler/options.h"
#include "kiln/compiler/program.h"
#include "kiln/ir/graph.h"

namespace kiln {

// How to compile: the pipeline's switches and the inputs donated to outputs. A donated argument
// is handed over: run() may write the output into its bytes and return a tensor sharing them,
// so the caller must not read the argument afterwards (parameters and optimizer state updated in
// place). A backend may also ignore a donation and return a fresh tensor.
struct CompileSpec {
  CompileOptions options{};
  std::vector<Donation> donations{};
};

// What a compiled executable is made of, for counters and structural tests.
struct ExecutableStats {
  int64_t kernels = 0;      // kernels launched per run
  int64_t arena_bytes = 0;  // planned intermediate memory, allocated once at compile time
};

// An executable holds everything it runs (its own copy of the graph, constants, kernels): the
// runtime's cache keeps it, and hands it out for equal graphs, after the original graph is gone.
class Executable {
 public:
  virtual ~Executable() = default;
  // Throws Error naming the input when an argument's dtype or shape differs from the graph's.
  virtual std::vector<Tensor> run(const std::vector<Tensor>& arguments) = 0;
  virtual ExecutableStats stats() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Whether compile() accepts this node as it is.
  virtual bool supports(const Node& node) const = 0;
  // Throws Error naming the node of an unsupported op.
  virtual std::unique_ptr<Executable> compile(const Graph& graph, const std::vector<Value>& outputs,
                                              const CompileSpec& spec) = 0;
  // With the default options and no donations.
  std::unique_ptr<Executable> compile(const Graph& graph, const std::vector<Value>& outputs) {
    return compile(graph, outputs, CompileSpec{});
  }

  // Optional: executables that outlive the process, for the runtime's compile cache on disk.
  // Backends whose compiles are slow (XLA) provide these; the others compile in milliseconds and
  // keep the defaults, which serialize nothing.
  virtual bool serializes() const { return false; }
  // What serialized bytes depend on besides the program (plugin, its version, the device kind):
  // bytes saved under another identity are never loaded.
  virtual std::string cache_identity() const { return std::string(name()); }
  // The bytes of an executable this backend compiled; nullopt when it cannot save them.
  virtual std::optional<std::string> serialize(const Executable&) const { return std::nullopt; }
  // The executable serialize() saved, for the graph, outputs and spec it was compiled from (the
  // backend takes result types and argument checks from them). Throws Error when the bytes are not
  // such an executable (truncated, from another build).
  virtual std::unique_ptr<Executable> deserialize(const std::string& bytes, const Graph& graph,
                                                  const std::vector<Value>& outputs,
                                                  const CompileSpec& spec);
};

// Checks the arguments against the graph's inputs (count, dtype, shape), naming the input.
void check_arguments(const Graph& graph, const std::vector<Tensor>& arguments);

}  // namespace kiln
