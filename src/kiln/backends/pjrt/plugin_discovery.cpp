// Finding PJRT plugin files (see plugin_discovery.h).
#include "kiln/backends/pjrt/plugin_discovery.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

// The first line of `path`, trimmed; empty when it cannot be read.
std::string first_line(const fs::path& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  const char* space = " \t\r";
  size_t begin = line.find_first_not_of(space);
  if (begin == std::string::npos) return "";
  return line.substr(begin, line.find_last_not_of(space) + 1 - begin);
}

// The version pyenv selects, as `pyenv version-name` finds it: $PYENV_VERSION, else the nearest
// .python-version from the working folder up, else <root>/version. Several may be listed
// (separated by ':' or spaces); "system" means the Python that is on PATH anyway.
std::vector<std::string> pyenv_selected_versions(const fs::path& root) {
  std::string selected = environment("PYENV_VERSION");
  std::error_code error;
  for (fs::path dir = fs::current_path(error); selected.empty() && !dir.empty();
       dir = dir.parent_path()) {
    if (fs::exists(dir / ".python-version", error)) selected = first_line(dir / ".python-version");
    if (dir == dir.parent_path()) break;
  }
  if (selected.empty()) selected = first_line(root / "version");
  std::replace(selected.begin(), selected.end(), ' ', ':');
  return split(selected, ':');
}

// A PATH folder holding pyenv's shims (<root>/shims/python3 is a script that runs the selected
// version, so its parent folder is no Python prefix): the prefixes of the Pythons pyenv
// installed, <root>/versions/<name>, the selected ones first, then the others by name.
std::vector<fs::path> pyenv_prefixes(const fs::path& shims) {
  std::error_code error;
  fs::path versions = shims.parent_path() / "versions";
  if (shims.filename() != "shims" || !fs::is_directory(versions, error)) return {};
  std::vector<fs::path> prefixes;
  for (const std::string& name : pyenv_selected_versions(shims.parent_path())) {
    if (fs::is_directory(versions / name, error)) prefixes.push_back(versions / name);
  }
  std::vector<fs::path> others;
  for (const fs::directory_entry& entry : fs::directory_iterator(versions, error)) {
    if (std::find(prefixes.begin(), prefixes.end(), entry.path()) == prefixes.end())
      others.push_back(entry.path());
  }
  std::sort(others.begin(), others.end());
  prefixes.insert(prefixes.end(), others.begin(), others.end());
  return prefixes;
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
    fs::path python = fs::path(dir) / "python3";
    if (!fs::exists(python, error)) continue;
    prefixes.push_back(fs::path(dir).parent_path());
    // A python3 linked from elsewhere (/usr/local/bin -> /opt/python3.12/bin) has its packages
    // under the real prefix.
    fs::path real = fs::canonical(python, error);
    if (!error && real.parent_path() != fs::path(dir))
      prefixes.push_back(real.parent_path().parent_path());
    for (fs::path& prefix : pyenv_prefixes(dir)) prefixes.push_back(std::move(prefix));
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
