// Finding PJRT plugin files (see plugin_discovery.h).
#include "kiln/backends/pjrt/plugin_discovery.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace kiln::pjrt {
namespace {

namespace fs = std::filesystem;

// Plugin files inside a Python package folder, by the package that installs them.
struct PackagedPlugin {
  PluginKind kind;
  std::string_view relative_path;
  std::string_view package;
};
constexpr PackagedPlugin kPackagedPlugins[] = {
    {PluginKind::tpu, "libtpu/libtpu.so", "libtpu"},
    {PluginKind::cuda, "jax_plugins/xla_cuda13/xla_cuda_plugin.so", "jax-cuda13-pjrt"},
    {PluginKind::cuda, "jax_plugins/xla_cuda12/xla_cuda_plugin.so", "jax-cuda12-pjrt"},
    {PluginKind::cpu, "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so", "xla-cpu-pjrt"},
};

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

bool is_file(const std::string& path) {
  std::error_code error;
  return !path.empty() && fs::is_regular_file(path, error);
}

// prefix/lib/python3.*/{site,dist}-packages and prefix/lib/python3/dist-packages (Debian's).
void add_package_dirs(const fs::path& prefix, std::vector<std::string>& dirs) {
  std::error_code error;
  fs::path lib = prefix / "lib";
  if (!fs::is_directory(lib, error)) return;
  std::vector<std::string> found;
  for (const fs::directory_entry& entry : fs::directory_iterator(lib, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("python3", 0) != 0) continue;
    for (const char* leaf : {"site-packages", "dist-packages"}) {
      if (fs::is_directory(entry.path() / leaf, error)) {
        found.push_back((entry.path() / leaf).string());
      }
    }
  }
  std::sort(found.begin(), found.end());
  dirs.insert(dirs.end(), found.begin(), found.end());
}

}  // namespace

std::string_view plugin_kind_name(PluginKind kind) {
  switch (kind) {
    case PluginKind::tpu:
      return "tpu";
    case PluginKind::cuda:
      return "cuda";
    case PluginKind::cpu:
      return "cpu";
    case PluginKind::other:
      return "other";
  }
  return "other";
}

PluginKind guess_plugin_kind(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string file = fs::path(lower).filename().string();
  if (file.find("tpu") != std::string::npos) return PluginKind::tpu;
  if (file.find("cuda") != std::string::npos || file == "gpu") return PluginKind::cuda;
  if (file.find("cpu") != std::string::npos) return PluginKind::cpu;
  return PluginKind::other;
}

DiscoverySources discovery_sources(const std::string& explicit_plugin) {
  DiscoverySources sources;
  sources.explicit_plugin = explicit_plugin;
  sources.names_and_paths = environment("PJRT_NAMES_AND_LIBRARY_PATHS");
  sources.tpu_library_path = environment("TPU_LIBRARY_PATH");
  sources.library_dirs = {"/usr/local/lib", "/usr/lib", "/lib"};
  std::vector<fs::path> prefixes;
  std::error_code error;
  for (const std::string& dir : split(environment("PATH"), ':')) {
    if (fs::exists(fs::path(dir) / "python3", error))
      prefixes.push_back(fs::path(dir).parent_path());
  }
  for (const char* variable : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    if (std::string prefix = environment(variable); !prefix.empty()) prefixes.emplace_back(prefix);
  }
  if (std::string home = environment("HOME"); !home.empty())
    prefixes.push_back(fs::path(home) / ".local");
  prefixes.emplace_back("/usr/local");
  prefixes.emplace_back("/usr");
  for (const fs::path& prefix : prefixes) add_package_dirs(prefix, sources.package_dirs);
  return sources;
}

std::vector<PluginLocation> discover_plugins(const DiscoverySources& sources) {
  std::vector<PluginLocation> found;
  auto add = [&found](PluginKind kind, const std::string& path, std::string found_by) {
    if (!is_file(path)) return;
    std::error_code error;
    std::string canonical = fs::weakly_canonical(path, error).string();
    bool seen = std::any_of(found.begin(), found.end(), [&](const PluginLocation& location) {
      return fs::weakly_canonical(location.path, error).string() == canonical;
    });
    if (!seen) found.push_back({kind, path, std::move(found_by)});
  };
  add(guess_plugin_kind(sources.explicit_plugin), sources.explicit_plugin, "--pjrt_plugin");
  for (const std::string& entry : split(sources.names_and_paths, ',')) {
    size_t colon = entry.find(':');
    if (colon == std::string::npos) continue;
    std::string name = entry.substr(0, colon);
    std::string path = entry.substr(colon + 1);
    PluginKind kind = guess_plugin_kind(name);
    if (kind == PluginKind::other) kind = guess_plugin_kind(path);
    add(kind, path, "PJRT_NAMES_AND_LIBRARY_PATHS (" + name + ")");
  }
  add(PluginKind::tpu, sources.tpu_library_path, "TPU_LIBRARY_PATH");
  for (const PackagedPlugin& packaged : kPackagedPlugins) {
    for (const std::string& dir : sources.package_dirs) {
      add(packaged.kind, (fs::path(dir) / packaged.relative_path).string(),
          std::string(packaged.package) + " package");
    }
    if (packaged.kind == PluginKind::tpu) {
      for (const std::string& dir : sources.library_dirs) {
        add(PluginKind::tpu, (fs::path(dir) / "libtpu.so").string(), "system libtpu");
      }
    }
  }
  return found;
}

}  // namespace kiln::pjrt
