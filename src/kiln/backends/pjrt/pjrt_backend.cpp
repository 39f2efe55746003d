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

class PjrtExecutable : public Executable {
 public:
  PjrtExecutable(Module module, std::unique_ptr<pjrt::LoadedProgram> program, std::string source)
      : module_(std::move(module)), program_(std::move(program)), source_(std::move(source)) {
    for (int32_t id : module_.outputs) {
      const Node& node = module_.graph->node(id);
      results_.emplace_back(node.dtype, node.shape);
    }
  }

  std::vector<Tensor> run(const std::vector<Tensor>& arguments) override {
    check_arguments(*module_.graph, arguments);
    return program_->run(arguments, results_);
  }

  // One XLA executable per run; its memory is the plugin's.
  ExecutableStats stats() const override { return {1, 0}; }

  // What PjrtBackend::serialize saves: the fingerprint of what XLA compiled, and the program.
  const std::string& source() const { return source_; }
  const pjrt::LoadedProgram& program() const { return *program_; }

 private:
  Module module_;  // the compiled graph, for argument checks and result types
  std::unique_ptr<pjrt::LoadedProgram> program_;
  std::vector<std::pair<DType, Shape>> results_;
  std::string source_;  // source_fingerprint() of the module XLA compiled
};

// Identifies what XLA compiled (the StableHLO text and the compile options) in 16 hex digits: a
// saved executable is loaded only for the same source, so a Kiln build that lowers a graph
// differently never runs another build's program.
std::string source_fingerprint(const std::string& module) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(
                    bytes_fingerprint(module + "\n" + pjrt::single_device_compile_options())));
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
    std::string module = pjrt::lower_to_stablehlo(program);
    auto loaded = client_.compile(module, pjrt::single_device_compile_options());
    return std::make_unique<PjrtExecutable>(std::move(program.module), std::move(loaded),
                                            source_fingerprint(module));
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
    std::string source = source_fingerprint(pjrt::lower_to_stablehlo(program));
    check(bytes.size() > source.size() && bytes.compare(0, source.size(), source) == 0 &&
              bytes[source.size()] == '\n',
          name_, "the saved executable was compiled from another StableHLO module");
    auto loaded = client_.deserialize(bytes.substr(source.size() + 1));
    check(loaded->num_outputs() == program.module.outputs.size(), name_,
          "the saved executable has ", loaded->num_outputs(), " outputs, the program ",
          program.module.outputs.size());
    return std::make_unique<PjrtExecutable>(std::move(program.module), std::move(loaded),
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
                                               const pjrt::DiscoverySources& sources) {
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
  pjrt::Client& client = pjrt::Client::open(path);
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
