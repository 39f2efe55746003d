// `kiln devices`: the backends this machine can run, the CPU's instruction sets and those the CPU
// backend uses (KILN_MAX_CPU_ISA caps them), the PJRT plugins found (each opened, with its
// platform, versions and devices, or the error that kept it from opening), and what
// `--device auto` picks.
#include <iostream>
#include <optional>
#include <string>

#include "commands.h"
#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/backends/pjrt/pjrt_backend.h"
#include "kiln/backends/pjrt/pjrt_client.h"
#include "kiln/ir/error.h"

namespace kiln::cli {
namespace {

// The plugin attributes worth showing: which XLA and StableHLO the plugin was built with.
bool shown_attribute(const std::string& name) {
  return name == "xla_version" || name == "stablehlo_current_version";
}

void describe_plugin(const pjrt::PluginLocation& location, std::ostream& out) {
  out << "  " << pjrt::plugin_kind_name(location.kind) << "  " << location.path << "\n"
      << "      found by: " << location.found_by << "\n";
  try {
    pjrt::Client& client = pjrt::Client::open(location.path);
    out << "      platform: " << client.platform_name() << " " << client.platform_version()
        << ", PJRT C API " << client.api_version();
    for (const auto& [name, value] : client.attributes()) {
      if (shown_attribute(name)) out << ", " << name << " " << value;
    }
    out << "\n";
    for (const pjrt::DeviceInfo& device : client.devices()) {
      out << "      device " << device.id << ": " << device.kind << "\n";
    }
    if (client.devices().empty()) out << "      no device\n";
  } catch (const Error& error) {
    out << "      cannot be opened: " << error.what() << "\n";
  }
}

// The levels this CPU has, lowest first (.ci/run reads the "this CPU:" line), and those in use.
void describe_cpu_isa(std::ostream& out) {
  using cpu::CpuIsa;
  std::optional<CpuIsa> cap = cpu::cpu_isa_cap();  // first: an unknown value prints nothing here
  std::string levels;
  for (auto level = static_cast<int>(CpuIsa::baseline);
       level <= static_cast<int>(cpu::detected_cpu_isa()); ++level) {
    levels.append(" ").append(cpu::cpu_isa_name(static_cast<CpuIsa>(level)));
  }
  out << "CPU instruction sets (oneDNN's names; KILN_MAX_CPU_ISA=<name> caps Kiln's and oneDNN's "
         "kernels):\n  this CPU:" << levels << "\n  in use:   "
      << cpu::cpu_isa_name(cpu::effective_cpu_isa())
      << (cap ? " (KILN_MAX_CPU_ISA=" + std::string(cpu::cpu_isa_name(*cap)) + ")" : "")
      << "; loop kernels " << cpu::cpu_isa_name(cpu::loop_kernel_isa()) << ", oneDNN "
      << cpu::onednn_cpu_isa() << "\n";
}

void list_devices(const std::string& plugin) {
  pjrt::DiscoverySources sources = pjrt::discovery_sources(plugin);
  std::vector<pjrt::PluginLocation> plugins = pjrt::discover_plugins(sources);
  std::cout << "Kiln backends:\n"
            << "  cpu        Kiln's CPU backend (oneDNN matrix multiplies)   --device cpu\n"
            << "  reference  the reference backend, the oracle of the tests  --device reference\n";
  describe_cpu_isa(std::cout);
  std::cout << "PJRT plugins (--device pjrt:cpu|pjrt:cuda|pjrt:tpu):\n";
  if (plugins.empty()) {
    std::cout << "  none found (set PJRT_NAMES_AND_LIBRARY_PATHS=name:path, pass --pjrt_plugin "
                 "PATH, or pip install libtpu, jax-cuda13-pjrt or xla-cpu-pjrt)\n";
  }
  for (const pjrt::PluginLocation& location : plugins) describe_plugin(location, std::cout);
  std::unique_ptr<Backend> accelerator = make_accelerator_backend(sources);
  std::cout << "--device auto runs on: " << (accelerator ? accelerator->name() : "cpu") << "\n";
}

}  // namespace

void add_devices_command(CLI::App& app) {
  auto* command = app.add_subcommand("devices", "List the devices Kiln can train on");
  auto plugin = std::make_shared<std::string>();
  command->add_option("--pjrt_plugin", *plugin, "A PJRT plugin library to list with the others");
  command->footer("Example: kiln devices --pjrt_plugin /path/to/pjrt_plugin.so");
  command->callback([plugin] { list_devices(*plugin); });
}

}  // namespace kiln::cli
