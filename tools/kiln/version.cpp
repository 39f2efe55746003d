// `kiln --version`: the version, the backends compiled into this binary and the PJRT plugins that
// discovery finds now (what `kiln devices` lists in full).
#include <sstream>

#include "commands.h"
#include "kiln/backends/pjrt/pjrt_backend.h"

namespace kiln::cli {

std::string version_text() {
  std::ostringstream out;
  out << "kiln " << KILN_VERSION << "\n"
      << "backends: cpu (oneDNN), reference, pjrt (PJRT C API; plugins are loaded at run time)\n";
  std::vector<pjrt::PluginLocation> plugins = pjrt::discover_plugins(pjrt::discovery_sources(""));
  if (plugins.empty()) {
    out << "PJRT plugin: none found (see `kiln devices`)";
  }
  for (size_t i = 0; i < plugins.size(); ++i) {
    out << (i == 0 ? "" : "\n") << "PJRT plugin: " << pjrt::plugin_kind_name(plugins[i].kind)
        << " " << plugins[i].path << " (found by " << plugins[i].found_by << ")";
  }
  return out.str();
}

}  // namespace kiln::cli
