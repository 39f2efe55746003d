// Shared by the pjrt_* tests: the XLA CPU plugin they run on, found as `kiln devices` finds
// plugins, else the one CMake found at configure time; the tests skip when there is none
// (and fail in CI, which installs it).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kiln/backends/pjrt/plugin_discovery.h"
#include "support/testing.h"

namespace kiln::testing {

inline std::string cpu_plugin_path() {
  for (const pjrt::PluginLocation& location : pjrt::discover_plugins(pjrt::discovery_sources(""))) {
    if (location.kind == pjrt::PluginKind::cpu) return location.path;
  }
  return KILN_PJRT_CPU_PLUGIN;
}

}  // namespace kiln::testing

// Skips the test, saying how to get the plugin, when none is found (fails in CI, which
// installs it).
#define KILN_SKIP_WITHOUT_CPU_PLUGIN(path)                                                    \
  KILN_SKIP_UNLESS(!(path).empty(),                                                           \
                   "no XLA CPU PJRT plugin: pip install xla-cpu-pjrt into the python3 on "    \
                   "PATH, set PJRT_NAMES_AND_LIBRARY_PATHS=cpu:/path/to/xla_cpu_pjrt.so, or " \
                   "configure with -DKILN_PJRT_CPU_PLUGIN=/path/to/xla_cpu_pjrt.so")
