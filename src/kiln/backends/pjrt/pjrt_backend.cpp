// The PJRT backend: compile_program, lowering to StableHLO, PJRT compilation, runs, and
// executables saved as the plugin's bytes for the runtime's compile cache on disk.
#include "kiln/backends/pjrt/pjrt_backend.h"

#include <cstdio>
#include <filesystem>

#include "kiln/backends/pjrt/compile_options_proto.h"
#include "kiln/backends/pjrt/pjrt_client.h"
#include "kiln/backends/pjrt/stablehlo_lowering.h"
#include "kiln/compiler/pipeline.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

// A value in one device's memory.
class PjrtBuffer final : public Buffer {
 public:
  PjrtBuffer(std::unique_ptr<pjrt::DeviceBuffer> buffer, DType dtype, Shape shape)
      : buffer_(std::move(buffer)), dtype_(dtype), shape_(std::move(shape)) {}
  DType dtype() const override { return dtype_; }
  const Shape& shape() const override { return shape_; }
  Tensor to_host() const override {
    Tensor out = Tensor::uninitialized(dtype_, shape_);
    buffer_->copy_to(out);
    return out;
  }
  pjrt::abi::Buffer* handle() const { return buffer_->get(); }

 private:
  std::unique_ptr<pjrt::DeviceBuffer> buffer_;
  DType dtype_;
  Shape shape_;
};

class PjrtExecutable : public Executable {
 public:
  PjrtExecutable(Module module, std::unique_ptr<pjrt::LoadedProgram> program, pjrt::Client& client,
                 std::string source)
      : module_(std::move(module)),
        program_(std::move(program)),
        client_(client),
        source_(std::move(source)) {}

  // Host tensors (one replica): copied to the first device, run, and the results copied back.
  std::vector<Tensor> run(const std::vector<Tensor>& arguments) override {
    check_arguments(*module_.graph, arguments);
    check(program_->replicas() == 1, "run", "a program of ", program_->replicas(),
          " replicas takes one buffer list per replica");
    std::vector<BufferPtr> buffers;
    for (const Tensor& argument : arguments) {
      buffers.push_back(std::make_shared<PjrtBuffer>(client_.upload(argument, 0),
                                                     argument.dtype(), argument.shape()));
    }
    BufferLists results = run(BufferLists{std::move(buffers)});
    std::vector<Tensor> values;
    for (const BufferPtr& result : results[0]) values.push_back(result->to_host());
    return values;
  }

  BufferLists run(const BufferLists& arguments) override {
    const Graph& graph = *module_.graph;
    std::vector<std::vector<pjrt::abi::Buffer*>> handles;
    for (const std::vector<BufferPtr>& list : arguments) {
      check_arguments(graph, list);
      std::vector<pjrt::abi::Buffer*>& replica = handles.emplace_back();
      for (size_t i = 0; i < list.size(); ++i) {
        const auto* buffer = dynamic_cast<const PjrtBuffer*>(list[i].get());
        check(buffer != nullptr, "run", "input '", graph.input_name(graph.inputs()[i]),
              "' is not a buffer of this device");
        replica.push_back(buffer->handle());
      }
    }
    BufferLists results;
    for (pjrt::DeviceBuffers& replica : program_->execute(handles)) {
      std::vector<BufferPtr>& list = results.emplace_back();
      for (size_t i = 0; i < replica.size(); ++i) {
        const Node& node = graph.node(module_.outputs[i]);
        list.push_back(std::make_shared<PjrtBuffer>(std::move(replica[i]), node.dtype, node.shape));
      }
    }
    return results;
  }

  // One XLA executable per run; its memory is the plugin's.
  ExecutableStats stats() const override { return {1, 0}; }

  // What PjrtBackend::serialize saves: the fingerprint of what XLA compiled, and the program.
  const std::string& source() const { return source_; }
  const pjrt::LoadedProgram& program() const { return *program_; }

 private:
  Module module_;  // the compiled graph, for argument checks and result types
  std::unique_ptr<pjrt::LoadedProgram> program_;
  pjrt::Client& client_;
  std::string source_;  // source_fingerprint() of the module XLA compiled
};

// Identifies what XLA compiled (the StableHLO text and the compile options) in 16 hex digits: a
// saved executable is loaded only for the same source, so a Kiln build that lowers a graph
// differently never runs another build's program.
std::string source_fingerprint(const std::string& module, int replicas) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(
                    bytes_fingerprint(module + "\n" + pjrt::compile_options(replicas))));
  return hex;
}

class PjrtBackend : public Backend {
 public:
  explicit PjrtBackend(pjrt::Client& client)
      : client_(client), name_("pjrt:" + client.platform_name()) {}

  std::string_view name() const override { return name_; }

  // Every op: composites through their decompositions.
  bool supports(const Node&) const override { return true; }

  std::unique_ptr<Executable> compile(const Graph& graph, const std::vector<Value>& outputs,
                                      const CompileSpec& spec) override {
    Program program = compile_pjrt_program(graph, outputs, spec);
    std::string module = pjrt::lower_to_stablehlo(program, spec.replicas);
    auto replicas = static_cast<size_t>(spec.replicas);
    auto loaded = client_.compile(module, pjrt::compile_options(spec.replicas), replicas);
    return std::make_unique<PjrtExecutable>(std::move(program.module), std::move(loaded), client_,
                                            source_fingerprint(module, spec.replicas));
  }

  bool host_memory() const override { return false; }
  int devices() const override { return static_cast<int>(client_.devices().size()); }
  BufferPtr upload(const Tensor& tensor, int device) override {
    return std::make_shared<PjrtBuffer>(client_.upload(tensor, static_cast<size_t>(device)),
                                        tensor.dtype(), tensor.shape());
  }

  bool serializes() const override { return true; }

  // The plugin's platform and version attributes, the device kind and the library's size: XLA
  // loads executables only from the same platform and library version.
  std::string cache_identity() const override {
    std::string identity =
        name_ + " " + client_.platform_version() + " api " + client_.api_version();
    for (const auto& [name, value] : client_.attributes()) identity += " " + name + "=" + value;
    if (!client_.devices().empty()) identity += " device=" + client_.devices().front().kind;
    std::error_code error;
    uintmax_t bytes = std::filesystem::file_size(client_.path(), error);
    if (!error) identity += " plugin_bytes=" + std::to_string(bytes);
    return identity;
  }

  // The source fingerprint, a newline, then the plugin's bytes.
  std::optional<std::string> serialize(const Executable& executable) const override {
    const auto* compiled = dynamic_cast<const PjrtExecutable*>(&executable);
    if (compiled == nullptr) return std::nullopt;
    return compiled->source() + "\n" + compiled->program().serialize();
  }

  // Kiln's pipeline and the lowering run again (milliseconds): they give the module for argument
  // checks and result types, and the source fingerprint that the saved one must equal.
  std::unique_ptr<Executable> deserialize(const std::string& bytes, const Graph& graph,
                                          const std::vector<Value>& outputs,
                                          const CompileSpec& spec) override {
    Program program = compile_pjrt_program(graph, outputs, spec);
    std::string source =
        source_fingerprint(pjrt::lower_to_stablehlo(program, spec.replicas), spec.replicas);
    check(bytes.size() > source.size() && bytes.compare(0, source.size(), source) == 0 &&
              bytes[source.size()] == '\n',
          name_, "the saved executable was compiled from another StableHLO module");
    auto loaded = client_.deserialize(bytes.substr(source.size() + 1),
                                      static_cast<size_t>(spec.replicas));
    check(loaded->num_outputs() == program.module.outputs.size(), name_,
          "the saved executable has ", loaded->num_outputs(), " outputs, the program ",
          program.module.outputs.size());
    return std::make_unique<PjrtExecutable>(std::move(program.module), std::move(loaded), client_,
                                            std::move(source));
  }

 private:
  pjrt::Client& client_;
  std::string name_;
};

pjrt::PluginKind platform_kind(const std::string& platform) {
  if (platform == "gpu") return pjrt::PluginKind::cuda;
  return pjrt::guess_plugin_kind(platform);
}

std::string searched_places(const pjrt::DiscoverySources& sources) {
  std::string text = "PJRT_NAMES_AND_LIBRARY_PATHS, TPU_LIBRARY_PATH, the package folders";
  for (const std::string& dir : sources.package_dirs) text += " " + dir;
  return text;
}

}  // namespace

Program compile_pjrt_program(const Graph& graph, const std::vector<Value>& outputs,
                             const CompileSpec& spec) {
  CompileOptions options = spec.options;
  options.fusion = false;  // XLA fuses
  BackendCapabilities capabilities{[](OpKind) { return false; }};
  capabilities.aliases_donations_itself = true;
  return compile_program(graph, outputs, spec.donations, capabilities, options);
}

std::unique_ptr<Backend> make_pjrt_backend(const std::string& plugin_path) {
  return std::make_unique<PjrtBackend>(pjrt::Client::open(plugin_path));
}

std::unique_ptr<Backend> make_pjrt_backend_for(pjrt::PluginKind kind,
                                               const pjrt::DiscoverySources& sources,
                                               int64_t cpu_devices) {
  std::string wanted(pjrt::plugin_kind_name(kind));
  std::string path = sources.explicit_plugin;
  if (path.empty()) {
    for (const pjrt::PluginLocation& location : pjrt::discover_plugins(sources)) {
      if (location.kind == kind) {
        path = location.path;
        break;
      }
    }
  }
  check(!path.empty(), "--device", "no PJRT ", wanted, " plugin found (searched ",
        searched_places(sources), "); name one with --pjrt_plugin PATH");
  pjrt::Client::CreateOptions options;
  if (kind == pjrt::PluginKind::cpu && cpu_devices > 0) {
    options.emplace_back("cpu_device_count", cpu_devices);
  }
  pjrt::Client& client = pjrt::Client::open(path, options);
  check(platform_kind(client.platform_name()) == kind, "--device", "the PJRT plugin ", path,
        " drives '", client.platform_name(), "', not ", wanted);
  return std::make_unique<PjrtBackend>(client);
}

std::unique_ptr<Backend> make_accelerator_backend(const pjrt::DiscoverySources& sources) {
  std::vector<pjrt::PluginLocation> found = pjrt::discover_plugins(sources);
  for (pjrt::PluginKind kind : {pjrt::PluginKind::tpu, pjrt::PluginKind::cuda}) {
    for (const pjrt::PluginLocation& location : found) {
      if (location.kind != kind) continue;
      try {
        pjrt::Client& client = pjrt::Client::open(location.path);
        if (!client.devices().empty()) return std::make_unique<PjrtBackend>(client);
      } catch (const Error&) {
        // A plugin without its hardware (a CUDA plugin on a machine with no GPU) is no device.
      }
    }
  }
  return nullptr;
}

}  // namespace kiln
