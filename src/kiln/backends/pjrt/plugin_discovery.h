// Where PJRT plugins are found: a path given with --pjrt_plugin, the plugins named by
// PJRT_NAMES_AND_LIBRARY_PATHS ("name:path,name:path", as JAX reads it), TPU_LIBRARY_PATH, and
// the install places of libtpu and of the XLA GPU and CPU plugin packages (jax-cuda12/13-pjrt,
// xla-cpu-pjrt) in the Python package folders on this machine. Discovery only looks at files;
// nothing is loaded until a plugin is opened.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::pjrt {

// What a plugin drives, in the order of preference of --device auto.
enum class PluginKind { tpu, cuda, cpu, other };

std::string_view plugin_kind_name(PluginKind kind);  // "tpu", "cuda", "cpu", "other"

struct PluginLocation {
  PluginKind kind = PluginKind::other;
  std::string path;
  std::string found_by;  // "--pjrt_plugin", "PJRT_NAMES_AND_LIBRARY_PATHS", a package name, ...
};

// What discovery reads, gathered from the process's environment by discovery_sources() (and
// made by hand in tests).
struct DiscoverySources {
  std::string explicit_plugin;            // --pjrt_plugin
  std::string names_and_paths;            // $PJRT_NAMES_AND_LIBRARY_PATHS
  std::string tpu_library_path;           // $TPU_LIBRARY_PATH
  std::vector<std::string> library_dirs;  // searched for libtpu.so
  std::vector<std::string> package_dirs;  // Python site-packages / dist-packages folders
};

// The environment's sources: the Python package folders of every python3 on PATH (of the
// Pythons pyenv installed when PATH holds pyenv's shims, the selected version first), of
// $VIRTUAL_ENV and $CONDA_PREFIX, of ~/.local, /usr/local and /usr.
DiscoverySources discovery_sources(const std::string& explicit_plugin);

// The plugin files that exist, each path once: the explicit one first, then those of the
// environment variables, then the packages' (TPU, CUDA, CPU).
std::vector<PluginLocation> discover_plugins(const DiscoverySources& sources);

// The kind a plugin's name or file name suggests ("tpu", "libtpu.so", "xla_cuda_plugin.so").
PluginKind guess_plugin_kind(std::string_view name);

}  // namespace kiln::pjrt
