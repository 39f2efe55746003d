// A PJRT plugin loaded at run time (dlopen, GetPjrtApi) and the one client Kiln makes on it:
// devices, buffers in device memory, compilation of StableHLO text for one or more replicas (and
// executables saved and loaded as bytes), and runs that queue on the devices without waiting.
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
struct Buffer;
struct Client;
struct Device;
struct LoadedExecutable;
}  // namespace abi

struct DeviceInfo {
  int id = 0;
  std::string kind;  // as the plugin names it ("cpu", "NVIDIA H100 80GB HBM3", "TPU v5 lite")
};

// A buffer in a device's memory, destroyed with this object. Its value may still be computed
// by a queued run; copy_to() waits for it.
class DeviceBuffer {
 public:
  // `plugin` (the plugin's path, for errors) must outlive the buffer.
  DeviceBuffer(const abi::Api* api, const std::string& plugin, abi::Buffer* buffer)
      : api_(api), plugin_(&plugin), buffer_(buffer) {}
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  abi::Buffer* get() const { return buffer_; }
  // Copies the value into `out`, whose dtype and shape are the buffer's; throws the error of
  // the run that computed it.
  void copy_to(Tensor& out) const;

 private:
  const abi::Api* api_;
  const std::string* plugin_;
  abi::Buffer* buffer_;
};

using DeviceBuffers = std::vector<std::unique_ptr<DeviceBuffer>>;

// A compiled program on one device per replica.
class LoadedProgram {
 public:
  LoadedProgram(const abi::Api* api, const std::string& plugin, abi::LoadedExecutable* executable,
                size_t replicas, size_t num_outputs);
  ~LoadedProgram();
  LoadedProgram(const LoadedProgram&) = delete;
  LoadedProgram& operator=(const LoadedProgram&) = delete;

  // Queues a run with one argument list per replica (each on its replica's device) and returns
  // the results per replica without waiting. Donated arguments are consumed by the run.
  std::vector<DeviceBuffers> execute(const std::vector<std::vector<abi::Buffer*>>& arguments);
  size_t num_outputs() const { return num_outputs_; }
  size_t replicas() const { return replicas_; }
  // The plugin's bytes of this program (PJRT_Executable_Serialize), which Client::deserialize of
  // the same plugin build loads in another process.
  std::string serialize() const;

 private:
  const abi::Api* api_;
  const std::string& plugin_;
  abi::LoadedExecutable* executable_;
  size_t replicas_;
  size_t num_outputs_;
  std::mutex run_mutex_;  // one run at a time, as every Executable promises
};

class Client {
 public:
  // Integer options of PJRT_Client_Create, e.g. the CPU plugin's {"cpu_device_count", 8}.
  using CreateOptions = std::vector<std::pair<std::string, int64_t>>;

  // The client of the plugin library at `path`, loaded, version-checked, initialised and created
  // (with `options`) on first use; later calls return the same client, whatever their options
  // (plugins stay loaded for the process's lifetime, as JAX keeps them). Throws Error naming the
  // path and the step that failed.
  static Client& open(const std::string& path, const CreateOptions& options = {});

  const std::string& path() const { return path_; }
  // "cpu", "cuda", "tpu", ...
  const std::string& platform_name() const { return platform_name_; }
  const std::string& platform_version() const { return platform_version_; }
  // The plugin's PJRT C API version, "major.minor".
  std::string api_version() const;
  const std::vector<DeviceInfo>& devices() const { return devices_; }
  // What the plugin says about itself (xla_version, stablehlo_current_version, ...), as text.
  std::vector<std::pair<std::string, std::string>> attributes() const;

  // Compiles a StableHLO module (MLIR text) for `replicas` devices (the first ones);
  // `compile_options` is a serialized xla.CompileOptionsProto for as many replicas.
  std::unique_ptr<LoadedProgram> compile(const std::string& mlir,
                                         const std::string& compile_options, size_t replicas = 1);

  // A copy of `tensor` in the memory of device `device` (an index into devices()).
  std::unique_ptr<DeviceBuffer> upload(const Tensor& tensor, size_t device);
  // A program from LoadedProgram::serialize() (PJRT_Executable_DeserializeAndLoad), on the
  // devices of its compile options; throws Error with the plugin's message for bytes it rejects.
  std::unique_ptr<LoadedProgram> deserialize(const std::string& bytes, size_t replicas = 1);

 private:
  Client(std::string path, const abi::Api* api, const CreateOptions& options);
  // A compiled or loaded executable with its output count (destroyed when that fails).
  std::unique_ptr<LoadedProgram> loaded_program(abi::LoadedExecutable* executable, size_t replicas);

  std::string path_;
  const abi::Api* api_;
  abi::Client* client_ = nullptr;
  std::vector<abi::Device*> device_handles_;
  std::vector<DeviceInfo> devices_;
  std::string platform_name_, platform_version_;
};

}  // namespace kiln::pjrt
