// The backend contract: what every executor of graphs (reference, CPU, CUDA, PJRT) provides.
//
// A backend compiles the part of a graph that the outputs depend on into an Executable, which
// then only runs. Arguments come in the graph's input order (Graph::inputs()), results in output
// order, either as host tensors or as Buffers: values the backend holds (device memory on an XLA
// device), so that state stays on the device from one run to the next and only what the caller
// asks for is copied to the host. Backends that optimise run the compiler pipeline
// (kiln/compiler/pipeline.h) with the options of the CompileSpec; the reference backend runs the
// graph as built, applying only what changes results (CompileOptions::semantics_only()).
#pragma once

#include <cstdint>
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
  // Data parallel: one copy of the program per device, each with its own arguments; all_reduce
  // ops sum over them. At most Backend::devices().
  int replicas = 1;
};

// A value held by a backend for one device. A buffer is written once, by upload() or by the run
// that returns it (which may still be in flight: the device queues runs, the host goes on).
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual DType dtype() const = 0;
  virtual const Shape& shape() const = 0;
  // A host copy of the value; waits for the run that produces it and throws its error.
  virtual Tensor to_host() const = 0;
  int64_t nbytes() const { return shape_numel(shape()) * static_cast<int64_t>(dtype_size(dtype())); }
};
using BufferPtr = std::shared_ptr<Buffer>;
// One argument or result list per replica.
using BufferLists = std::vector<std::vector<BufferPtr>>;

// The buffer of the backends that compute in host memory (reference, CPU): the tensor itself.
class HostBuffer final : public Buffer {
 public:
  explicit HostBuffer(Tensor tensor) : tensor_(std::move(tensor)) {}
  DType dtype() const override { return tensor_.dtype(); }
  const Shape& shape() const override { return tensor_.shape(); }
  // A copy: the buffer's bytes may be donated to a later run and overwritten.
  Tensor to_host() const override { return tensor_.clone(); }
  const Tensor& tensor() const { return tensor_; }

 private:
  Tensor tensor_;
};

// What a compiled executable is made of, for counters and structural tests.
struct ExecutableStats {
  int64_t kernels = 0;      // kernels launched per run
  int64_t arena_bytes = 0;  // planned intermediate memory, allocated once at compile time
  int64_t compiled_loops = 0;  // of the kernels, fused loops run as machine code (CPU backend)
};

// An executable holds everything it runs (its own copy of the graph, constants, kernels): the
// runtime's cache keeps it, and hands it out for equal graphs, after the original graph is gone.
class Executable {
 public:
  virtual ~Executable() = default;
  // Throws Error naming the input when an argument's dtype or shape differs from the graph's.
  virtual std::vector<Tensor> run(const std::vector<Tensor>& arguments) = 0;
  // One argument list per replica (all on this backend); the results per replica, possibly
  // still being computed. Host backends (one replica) run the tensors of their HostBuffers.
  virtual BufferLists run(const BufferLists& arguments);
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

  // Where buffers live: host memory (the reference and CPU backends) or a device's.
  virtual bool host_memory() const { return true; }
  // The devices a replicated program can run on.
  virtual int devices() const { return 1; }
  // `tensor` copied to device `device` (< devices()): a copy on host backends too, since runs
  // update donated buffers in place and the caller may keep its tensor.
  virtual BufferPtr upload(const Tensor& tensor, int device);

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
// The same for one argument list of buffers.
void check_arguments(const Graph& graph, const std::vector<BufferPtr>& arguments);

}  // namespace kiln
