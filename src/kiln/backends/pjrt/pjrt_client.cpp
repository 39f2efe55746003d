// Loading a PJRT plugin and calling its C API: every call goes through call(), which turns a
// returned PJRT_Error into a kiln::Error naming the plugin, the call and the plugin's message.
#include "kiln/backends/pjrt/pjrt_client.h"

#include <dlfcn.h>

#include <array>
#include <map>
#include <string_view>

#include "kiln/backends/pjrt/pjrt_abi.h"
#include "kiln/ir/error.h"

namespace kiln::pjrt {
namespace {

constexpr std::array<std::string_view, 17> kStatusCodes = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

// Throws the plugin's error (and frees it) when `error` is set.
void throw_if_error(const abi::Api* api, abi::Error* error, std::string_view plugin,
                    std::string_view step) {
  if (error == nullptr) return;
  auto message_args = abi::make_args<abi::ErrorMessageArgs>();
  message_args.error = error;
  api->error_message(&message_args);
  std::string message(message_args.message, message_args.message_size);
  auto code_args = abi::make_args<abi::ErrorGetCodeArgs>();
  code_args.error = error;
  std::string_view code = "UNKNOWN";
  if (api->error_get_code(&code_args) == nullptr && code_args.code >= 0 &&
      static_cast<size_t>(code_args.code) < kStatusCodes.size()) {
    code = kStatusCodes[static_cast<size_t>(code_args.code)];
  }
  auto destroy_args = abi::make_args<abi::ErrorDestroyArgs>();
  destroy_args.error = error;
  api->error_destroy(&destroy_args);
  fail("pjrt", plugin, ": ", step, " failed (", code, "): ", message);
}

// Calls one C API function with its argument struct and throws on error.
template <typename Args>
void call(const abi::Api* api, abi::Function<Args>* function, Args& args, std::string_view plugin,
          std::string_view step) {
  throw_if_error(api, function(&args), plugin, step);
}

// Waits for an event (none is fine), then frees it; the event's error is thrown.
void await_event(const abi::Api* api, abi::Event* event, std::string_view plugin,
                 std::string_view step) {
  if (event == nullptr) return;
  auto await_args = abi::make_args<abi::EventAwaitArgs>();
  await_args.event = event;
  abi::Error* error = api->event_await(&await_args);
  auto destroy_args = abi::make_args<abi::EventDestroyArgs>();
  destroy_args.event = event;
  abi::Error* destroy_error = api->event_destroy(&destroy_args);
  throw_if_error(api, error, plugin, step);
  throw_if_error(api, destroy_error, plugin, "PJRT_Event_Destroy");
}

abi::BufferType buffer_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return abi::BufferType::f32;
    case DType::f64:
      return abi::BufferType::f64;
    case DType::bf16:
      return abi::BufferType::bf16;
    case DType::f16:
      return abi::BufferType::f16;
    case DType::i32:
      return abi::BufferType::s32;
    case DType::i64:
      return abi::BufferType::s64;
    case DType::u32:
      return abi::BufferType::u32;
    case DType::boolean:
      return abi::BufferType::pred;  // one byte, 0 or 1, as Kiln stores bools
  }
  return abi::BufferType::invalid;
}

// Frees an error that cannot be reported (in destructors and cleanup paths).
void discard_error(const abi::Api* api, abi::Error* error) {
  if (error == nullptr) return;
  auto args = abi::make_args<abi::ErrorDestroyArgs>();
  args.error = error;
  api->error_destroy(&args);
}

void destroy_loaded_executable(const abi::Api* api, abi::LoadedExecutable* executable) {
  auto args = abi::make_args<abi::LoadedExecutableDestroyArgs>();
  args.executable = executable;
  discard_error(api, api->loaded_executable_destroy(&args));
}

// Calls `use` (returning a PJRT error or null) on the PJRT_Executable of `loaded`, which the
// plugin hands out for the call and which is destroyed after it; then throws use's error (as
// `step`) or the destroy's.
template <typename Use>
void with_executable(const abi::Api* api, abi::LoadedExecutable* loaded, std::string_view plugin,
                     std::string_view step, Use use) {
  auto get = abi::make_args<abi::LoadedExecutableGetExecutableArgs>();
  get.loaded_executable = loaded;
  call(api, api->loaded_executable_get_executable, get, plugin,
       "PJRT_LoadedExecutable_GetExecutable");
  abi::Error* error = use(get.executable);
  auto destroy = abi::make_args<abi::ExecutableDestroyArgs>();
  destroy.executable = get.executable;
  abi::Error* destroy_error = api->executable_destroy(&destroy);
  throw_if_error(api, error, plugin, step);
  throw_if_error(api, destroy_error, plugin, "PJRT_Executable_Destroy");
}

size_t count_outputs(const abi::Api* api, abi::LoadedExecutable* loaded, std::string_view plugin) {
  auto outputs = abi::make_args<abi::ExecutableNumOutputsArgs>();
  with_executable(api, loaded, plugin, "PJRT_Executable_NumOutputs", [&](abi::Executable* e) {
    outputs.executable = e;
    return api->executable_num_outputs(&outputs);
  });
  return outputs.num_outputs;
}

std::string text(const char* data, size_t size) {
  return data == nullptr ? "" : std::string(data, size);
}

}  // namespace

DeviceBuffer::~DeviceBuffer() {
  auto args = abi::make_args<abi::BufferDestroyArgs>();
  args.buffer = buffer_;
  discard_error(api_, api_->buffer_destroy(&args));
}

void DeviceBuffer::copy_to(Tensor& out) const {
  if (out.nbytes() == 0) return;
  auto copy = abi::make_args<abi::BufferToHostBufferArgs>();
  copy.src = buffer_;
  copy.dst = out.data();
  copy.dst_size = out.nbytes();
  call(api_, api_->buffer_to_host_buffer, copy, *plugin_, "PJRT_Buffer_ToHostBuffer");
  await_event(api_, copy.event, *plugin_, "PJRT_Buffer_ToHostBuffer");
}

LoadedProgram::LoadedProgram(const abi::Api* api, const std::string& plugin,
                             abi::LoadedExecutable* executable, size_t replicas,
                             size_t num_outputs)
    : api_(api),
      plugin_(plugin),
      executable_(executable),
      replicas_(replicas),
      num_outputs_(num_outputs) {}

LoadedProgram::~LoadedProgram() { destroy_loaded_executable(api_, executable_); }

std::vector<DeviceBuffers> LoadedProgram::execute(
    const std::vector<std::vector<abi::Buffer*>>& arguments) {
  check(arguments.size() == replicas_, "pjrt", plugin_, ": the program runs ", replicas_,
        " replicas, got ", arguments.size(), " argument lists");
  std::lock_guard<std::mutex> lock(run_mutex_);
  std::vector<abi::Buffer* const*> argument_lists;
  for (const std::vector<abi::Buffer*>& list : arguments) {
    check(list.size() == arguments[0].size(), "pjrt", plugin_,
          ": replicas need argument lists of one length");
    argument_lists.push_back(list.data());
  }
  std::vector<std::vector<abi::Buffer*>> outputs(replicas_,
                                                 std::vector<abi::Buffer*>(num_outputs_, nullptr));
  std::vector<abi::Buffer**> output_lists;
  for (std::vector<abi::Buffer*>& list : outputs) output_lists.push_back(list.data());
  auto options = abi::make_args<abi::ExecuteOptions>();
  auto args = abi::make_args<abi::LoadedExecutableExecuteArgs>();
  args.executable = executable_;
  args.options = &options;
  args.argument_lists = argument_lists.data();
  args.num_devices = replicas_;
  args.num_args = arguments[0].size();
  args.output_lists = output_lists.data();
  // No completion events: the run is queued and the host goes on; reading a result waits.
  call(api_, api_->loaded_executable_execute, args, plugin_, "PJRT_LoadedExecutable_Execute");
  std::vector<DeviceBuffers> results(replicas_);
  for (size_t r = 0; r < replicas_; ++r) {
    for (abi::Buffer* handle : outputs[r]) {
      results[r].push_back(std::make_unique<DeviceBuffer>(api_, plugin_, handle));
    }
  }
  return results;
}

Client& Client::open(const std::string& path, const CreateOptions& options) {
  // Never freed: plugins keep threads that must not be torn down at static destruction.
  static auto* clients = new std::map<std::string, std::unique_ptr<Client>>();
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = clients->find(path);
  if (found != clients->end()) return *found->second;

  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    fail("pjrt", path, ": dlopen failed: ", reason == nullptr ? "unknown reason" : reason);
  }
  using GetApi = const abi::Api* (*)();
  auto get_api = reinterpret_cast<GetApi>(dlsym(library, "GetPjrtApi"));
  check(get_api != nullptr, "pjrt", path, ": not a PJRT plugin (no GetPjrtApi symbol)");
  const abi::Api* api = get_api();
  check(api != nullptr, "pjrt", path, ": GetPjrtApi returned no API table");
  const abi::ApiVersion& version = api->pjrt_api_version;
  check(version.major_version == abi::kMajorVersion &&
            version.minor_version >= abi::kMinimumMinorVersion,
        "pjrt", path, ": PJRT C API version ", version.major_version, ".", version.minor_version,
        " is not supported (Kiln needs ", abi::kMajorVersion, ".", abi::kMinimumMinorVersion,
        " or a later ", abi::kMajorVersion, ".x)");
  check(api->struct_size >= abi::kApiBytesUsed, "pjrt", path, ": the plugin's API table has ",
        api->struct_size, " bytes, fewer than the ", abi::kApiBytesUsed, " Kiln uses");
  auto initialize = abi::make_args<abi::PluginInitializeArgs>();
  call(api, api->plugin_initialize, initialize, path, "PJRT_Plugin_Initialize");

  std::unique_ptr<Client> client(new Client(path, api, options));
  Client& result = *client;
  clients->emplace(path, std::move(client));
  return result;
}

Client::Client(std::string path, const abi::Api* api, const CreateOptions& options)
    : path_(std::move(path)), api_(api) {
  std::vector<abi::NamedValue> create_options;
  for (const auto& [name, value] : options) {
    auto option = abi::make_args<abi::NamedValue>();
    option.name = name.data();
    option.name_size = name.size();
    option.type = abi::NamedValueType::int64;
    option.int64_value = value;
    option.value_size = 1;
    create_options.push_back(option);
  }
  auto create = abi::make_args<abi::ClientCreateArgs>();
  create.create_options = create_options.data();
  create.num_options = create_options.size();
  call(api_, api_->client_create, create, path_, "PJRT_Client_Create");
  client_ = create.client;

  auto name = abi::make_args<abi::ClientStringArgs>();
  name.client = client_;
  call(api_, api_->client_platform_name, name, path_, "PJRT_Client_PlatformName");
  platform_name_ = text(name.value, name.value_size);
  auto version = abi::make_args<abi::ClientStringArgs>();
  version.client = client_;
  call(api_, api_->client_platform_version, version, path_, "PJRT_Client_PlatformVersion");
  platform_version_ = text(version.value, version.value_size);

  auto devices = abi::make_args<abi::ClientAddressableDevicesArgs>();
  devices.client = client_;
  call(api_, api_->client_addressable_devices, devices, path_, "PJRT_Client_AddressableDevices");
  for (size_t i = 0; i < devices.num_addressable_devices; ++i) {
    abi::Device* device = devices.addressable_devices[i];
    auto description = abi::make_args<abi::DeviceGetDescriptionArgs>();
    description.device = device;
    call(api_, api_->device_get_description, description, path_, "PJRT_Device_GetDescription");
    auto id = abi::make_args<abi::DeviceDescriptionIdArgs>();
    id.device_description = description.device_description;
    call(api_, api_->device_description_id, id, path_, "PJRT_DeviceDescription_Id");
    auto kind = abi::make_args<abi::DeviceDescriptionKindArgs>();
    kind.device_description = description.device_description;
    call(api_, api_->device_description_kind, kind, path_, "PJRT_DeviceDescription_Kind");
    device_handles_.push_back(device);
    devices_.push_back({id.id, text(kind.device_kind, kind.device_kind_size)});
  }
}

std::string Client::api_version() const {
  return std::to_string(api_->pjrt_api_version.major_version) + "." +
         std::to_string(api_->pjrt_api_version.minor_version);
}

std::vector<std::pair<std::string, std::string>> Client::attributes() const {
  auto args = abi::make_args<abi::PluginAttributesArgs>();
  call(api_, api_->plugin_attributes, args, path_, "PJRT_Plugin_Attributes");
  std::vector<std::pair<std::string, std::string>> result;
  for (size_t i = 0; i < args.num_attributes; ++i) {
    const abi::NamedValue& value = args.attributes[i];
    std::string shown;
    switch (value.type) {
      case abi::NamedValueType::string:
        shown = text(value.string_value, value.value_size);
        break;
      case abi::NamedValueType::int64:
        shown = std::to_string(value.int64_value);
        break;
      case abi::NamedValueType::int64_list:
        for (size_t j = 0; j < value.value_size; ++j) {
          shown += (j > 0 ? "." : "") + std::to_string(value.int64_array_value[j]);
        }
        break;
      case abi::NamedValueType::float32:
        shown = std::to_string(value.float_value);
        break;
      case abi::NamedValueType::boolean:
        shown = value.bool_value ? "true" : "false";
        break;
    }
    result.emplace_back(text(value.name, value.name_size), shown);
  }
  return result;
}

std::unique_ptr<LoadedProgram> Client::compile(const std::string& mlir,
                                               const std::string& compile_options,
                                               size_t replicas) {
  check(!device_handles_.empty(), "pjrt", path_, ": the ", platform_name_,
        " plugin found no device");
  check(replicas <= device_handles_.size(), "pjrt", path_, ": ", replicas,
        " replicas need as many devices; the plugin has ", device_handles_.size());
  std::string code = mlir;  // PJRT_Program takes a mutable pointer
  static constexpr std::string_view kFormat = "mlir";
  auto program = abi::make_args<abi::Program>();
  program.code = code.data();
  program.code_size = code.size();
  program.format = kFormat.data();
  program.format_size = kFormat.size();
  auto args = abi::make_args<abi::ClientCompileArgs>();
  args.client = client_;
  args.program = &program;
  args.compile_options = compile_options.data();
  args.compile_options_size = compile_options.size();
  call(api_, api_->client_compile, args, path_, "PJRT_Client_Compile");
  return loaded_program(args.executable, replicas);
}

std::unique_ptr<LoadedProgram> Client::loaded_program(abi::LoadedExecutable* executable,
                                                      size_t replicas) {
  size_t num_outputs = 0;
  try {
    num_outputs = count_outputs(api_, executable, path_);
  } catch (...) {
    destroy_loaded_executable(api_, executable);
    throw;
  }
  return std::make_unique<LoadedProgram>(api_, path_, executable, replicas, num_outputs);
}

std::unique_ptr<DeviceBuffer> Client::upload(const Tensor& tensor, size_t device) {
  check(device < device_handles_.size(), "pjrt", path_, ": no device ", device, " (the plugin has ",
        device_handles_.size(), ")");
  auto args = abi::make_args<abi::ClientBufferFromHostBufferArgs>();
  args.client = client_;
  args.data = tensor.nbytes() > 0 ? tensor.data() : nullptr;
  args.type = buffer_type(tensor.dtype());
  args.dims = tensor.shape().data();
  args.num_dims = tensor.shape().size();
  args.host_buffer_semantics = abi::HostBufferSemantics::immutable_only_during_call;
  args.device = device_handles_[device];
  call(api_, api_->client_buffer_from_host_buffer, args, path_,
       "PJRT_Client_BufferFromHostBuffer");
  auto buffer = std::make_unique<DeviceBuffer>(api_, path_, args.buffer);
  await_event(api_, args.done_with_host_buffer, path_, "PJRT_Client_BufferFromHostBuffer");
  return buffer;
}

std::string LoadedProgram::serialize() const {
  std::string bytes;
  with_executable(api_, executable_, plugin_, "PJRT_Executable_Serialize",
                  [&](abi::Executable* e) {
                    auto args = abi::make_args<abi::ExecutableSerializeArgs>();
                    args.executable = e;
                    abi::Error* error = api_->executable_serialize(&args);
                    if (error == nullptr) {
                      bytes.assign(args.serialized_bytes, args.serialized_bytes_size);
                      if (args.serialized_executable_deleter != nullptr) {
                        args.serialized_executable_deleter(args.serialized_executable);
                      }
                    }
                    return error;
                  });
  return bytes;
}

std::unique_ptr<LoadedProgram> Client::deserialize(const std::string& bytes, size_t replicas) {
  check(!device_handles_.empty(), "pjrt", path_, ": the ", platform_name_,
        " plugin found no device");
  auto args = abi::make_args<abi::ExecutableDeserializeAndLoadArgs>();
  args.client = client_;
  args.serialized_executable = bytes.data();
  args.serialized_executable_size = bytes.size();
  call(api_, api_->executable_deserialize_and_load, args, path_,
       "PJRT_Executable_DeserializeAndLoad");
  return loaded_program(args.loaded_executable, replicas);
}

}  // namespace kiln::pjrt
