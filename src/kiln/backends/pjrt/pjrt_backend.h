// The PJRT backend: each compiled program becomes one StableHLO module compiled by a PJRT plugin
// (libtpu, the XLA GPU plugin, the XLA CPU plugin) for its first device. Kiln's pipeline runs
// with the precision policy and donations but without fusion (XLA fuses), composites are
// decomposed into core ops, and runs move the host arguments to the device and the results back.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/backends/backend.h"
#include "kiln/backends/pjrt/plugin_discovery.h"

namespace kiln {

// The program the PJRT backend lowers for `graph`'s outputs under `spec`.
Program compile_pjrt_program(const Graph& graph, const std::vector<Value>& outputs,
                             const CompileSpec& spec);

// A backend on the plugin at `plugin_path` (opened on first use; see pjrt::Client::open).
// Its name is "pjrt:" and the plugin's platform ("pjrt:cpu", "pjrt:cuda", "pjrt:tpu").
std::unique_ptr<Backend> make_pjrt_backend(const std::string& plugin_path);

// The backend for `--device pjrt:cpu|pjrt:cuda|pjrt:tpu`: on --pjrt_plugin when given, else on
// the first discovered plugin of `kind`. Throws Error listing what was searched when there is
// none, or naming the plugin when it cannot be opened or drives another platform. A CPU plugin
// opened here first makes `cpu_devices` devices (0: the plugin's default).
std::unique_ptr<Backend> make_pjrt_backend_for(pjrt::PluginKind kind,
                                               const pjrt::DiscoverySources& sources,
                                               int64_t cpu_devices = 0);

// For `--device auto`: a backend on the first TPU, then CUDA, plugin found that opens and has a
// device, or null (then the native CPU backend is the best device). CPU plugins are not chosen
// here: Kiln's own CPU backend is the default on CPU-only machines.
std::unique_ptr<Backend> make_accelerator_backend(const pjrt::DiscoverySources& sources);

}  // namespace kiln
