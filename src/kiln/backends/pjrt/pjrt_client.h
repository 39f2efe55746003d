// A PJRT plugin loaded at run time (dlopen, GetPjrtApi) and the one client Kiln makes on it:
// devices, compilation of StableHLO text (and executables saved and loaded as bytes), and runs that
// move host tensors to the device and back.
// Every error a plugin returns becomes a kiln::Error naming the plugin, the C API call and the
// plugin's message.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/tensor.h"

namespace kiln::pjrt {

namespace abi {
struct Api;
struct Client;
struct Device;
struct LoadedExecutable;
}  // namespace abi

struct DeviceInfo {
  int id = 0;
  std::string kind;  // as the plugin names it ("cpu", "NVIDIA H100 80GB HBM3", "TPU v5 lite")
};

// A compiled program on one device. Runs copy the arguments in, execute, and copy the results out.
class LoadedProgram {
 public:
  LoadedProgram(const abi::Api* api, std::string plugin, abi::LoadedExecutable* executable,
                abi::Client* client, abi::Device* device, size_t num_outputs);
  ~LoadedProgram();
  LoadedProgram(const LoadedProgram&) = delete;
  LoadedProgram& operator=(const LoadedProgram&) = delete;

  // Results are allocated with the given dtypes and shapes (the program's outputs, in order).
  std::vector<Tensor> run(const std::vector<Tensor>& arguments,
                          const std::vector<std::pair<DType, Shape>>& results);
  size_t num_outputs() const { return num_outputs_; }
  // The plugin's bytes of this program (PJRT_Executable_Serialize), which Client::deserialize of
  // the same plugin build loads in another process.
  std::string serialize() const;

 private:
  const abi::Api* api_;
  std::string plugin_;
  abi::LoadedExecutable* executable_;
  abi::Client* client_;
  abi::Device* device_;
  size_t num_outputs_;
  std::mutex run_mutex_;  // one run at a time, as every Executable promises
};

class Client {
 public:
  // The client of the plugin library at `path`, loaded, version-checked, initialised and created
  // on first use; later calls return the same client (plugins stay loaded for the process's
  // lifetime, as JAX keeps them). Throws Error naming the path and the step that failed.
  static Client& open(const std::string& path);

  const std::string& path() const { return path_; }
  // "cpu", "cuda", "tpu", ...
  const std::string& platform_name() const { return platform_name_; }
  const std::string& platform_version() const { return platform_version_; }
  // The plugin's PJRT C API version, "major.minor".
  std::string api_version() const;
  const std::vector<DeviceInfo>& devices() const { return devices_; }
  // What the plugin says about itself (xla_version, stablehlo_current_version, ...), as text.
  std::vector<std::pair<std::string, std::string>> attributes() const;

  // Compiles a StableHLO module (MLIR text) for the first device; `compile_options` is a
  // serialized xla.CompileOptionsProto.
  std::unique_ptr<LoadedProgram> compile(const std::string& mlir,
                                         const std::string& compile_options);
  // A program from LoadedProgram::serialize() (PJRT_Executable_DeserializeAndLoad), on the
  // devices of its compile options; throws Error with the plugin's message for bytes it rejects.
  std::unique_ptr<LoadedProgram> deserialize(const std::string& bytes);

 private:
  Client(std::string path, const abi::Api* api);

  std::string path_;
  const abi::Api* api_;
  abi::Client* client_ = nullptr;
  std::vector<abi::Device*> device_handles_;
  std::vector<DeviceInfo> devices_;
  std::string platform_name_, platform_version_;
};

}  // namespace kiln::pjrt
