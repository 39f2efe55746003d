// The PJRT backend: compile_program, lowering to StableHLO, PJRT compilation, and runs.
#include "kiln/backends/pjrt/pjrt_backend.h"

#include "kiln/backends/pjrt/compile_options_proto.h"
#include "kiln/backends/pjrt/pjrt_client.h"
#include "kiln/backends/pjrt/stablehlo_lowering.h"
#include "kiln/compiler/pipeline.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

class PjrtExecutable : public Executable {
 public:
  PjrtExecutable(Module module, std::unique_ptr<pjrt::LoadedProgram> program)
      : module_(std::move(module)), program_(std::move(program)) {
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

 private:
  Module module_;  // the compiled graph, for argument checks and result types
  std::unique_ptr<pjrt::LoadedProgram> program_;
  std::vector<std::pair<DType, Shape>> results_;
};

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
    return std::make_unique<PjrtExecutable>(std::move(program.module), std::move(loaded));
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
