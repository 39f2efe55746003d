// The part of the PJRT C API (XLA's plugin interface, version 0.x) that Kiln calls, declared from
// its documented ABI: a plugin exports `const PJRT_Api* GetPjrtApi()`, a table of functions that
// each take one argument struct starting with (struct_size, extension_start) and return an error
// or null. Only the functions and structs Kiln uses are declared; the unused table slots are kept
// as placeholders so that the used ones sit at their ABI offsets. tests/pjrt_abi_test.cpp checks
// every size and offset here against the header a plugin package ships, when one is found at
// build time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::pjrt::abi {

// The major version changes only with ABI-incompatible changes; Kiln was written against 0.81.
inline constexpr int kMajorVersion = 0;
// Older plugins predate the StableHLO text syntax the lowering writes (untested below this).
inline constexpr int kMinimumMinorVersion = 40;

struct Error;
struct Event;
struct Client;
struct Device;
struct DeviceDescription;
struct Memory;
struct Executable;
struct LoadedExecutable;
struct Buffer;
struct ExtensionBase;
struct SerializedExecutable;

// Element types of buffers (the subset Kiln's dtypes map to).
enum class BufferType : int {
  invalid = 0,
  pred = 1,
  s32 = 4,
  s64 = 5,
  u32 = 8,
  f16 = 10,
  f32 = 11,
  f64 = 12,
  bf16 = 13,
};

enum class HostBufferSemantics : int {
  immutable_only_during_call = 0,  // the plugin copies the host data before returning
};

enum class NamedValueType : int { string = 0, int64 = 1, int64_list = 2, float32 = 3, boolean = 4 };

struct ApiVersion {
  size_t struct_size;
  ExtensionBase* extension_start;
  int major_version;
  int minor_version;
};

struct NamedValue {
  size_t struct_size;
  ExtensionBase* extension_start;
  const char* name;
  size_t name_size;
  NamedValueType type;
  union {
    const char* string_value;
    int64_t int64_value;
    const int64_t* int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size;
};

// ---- errors ----
struct ErrorDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Error* error;
};
struct ErrorMessageArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const Error* error;
  const char* message;  // out, lives as long as the error
  size_t message_size;  // out
};
struct ErrorGetCodeArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const Error* error;
  int code;  // out: an absl status code
};

// ---- plugin ----
struct PluginInitializeArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
};
struct PluginAttributesArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const NamedValue* attributes;  // out
  size_t num_attributes;         // out
};

// ---- events ----
struct EventDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Event* event;
};
struct EventAwaitArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Event* event;
};

// ---- client ----
struct ClientCreateArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const NamedValue* create_options;
  size_t num_options;
  void* kv_get_callback;
  void* kv_get_user_arg;
  void* kv_put_callback;
  void* kv_put_user_arg;
  Client* client;  // out
  void* kv_try_get_callback;
  void* kv_try_get_user_arg;
};
struct ClientDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
};
// Shared by PJRT_Client_PlatformName and PJRT_Client_PlatformVersion.
struct ClientStringArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
  const char* value;  // out, owned by the client
  size_t value_size;  // out
};
struct ClientAddressableDevicesArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
  Device* const* addressable_devices;  // out
  size_t num_addressable_devices;      // out
};
struct Program {
  size_t struct_size;
  ExtensionBase* extension_start;
  char* code;
  size_t code_size;
  const char* format;  // "mlir": MLIR bytecode or text
  size_t format_size;
};
struct ClientCompileArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
  const Program* program;
  const char* compile_options;  // a serialized xla.CompileOptionsProto
  size_t compile_options_size;
  LoadedExecutable* executable;  // out
};
struct ClientBufferFromHostBufferArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
  const void* data;
  BufferType type;
  const int64_t* dims;
  size_t num_dims;
  const int64_t* byte_strides;  // null: dense, row-major
  size_t num_byte_strides;
  HostBufferSemantics host_buffer_semantics;
  Device* device;
  Memory* memory;
  void* device_layout;           // null: the default layout
  Event* done_with_host_buffer;  // out
  Buffer* buffer;                // out
};

// ---- devices ----
struct DeviceGetDescriptionArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Device* device;
  DeviceDescription* device_description;  // out
};
struct DeviceDescriptionIdArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  DeviceDescription* device_description;
  int id;  // out
};
struct DeviceDescriptionKindArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  DeviceDescription* device_description;
  const char* device_kind;  // out
  size_t device_kind_size;  // out
};

// ---- executables ----
struct ExecutableDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Executable* executable;
};
struct ExecutableNumOutputsArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Executable* executable;
  size_t num_outputs;  // out
};
struct ExecutableSerializeArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const Executable* executable;
  const char* serialized_bytes;                 // out, lives as long as serialized_executable
  size_t serialized_bytes_size;                 // out
  SerializedExecutable* serialized_executable;  // out, freed by the deleter, once
  void (*serialized_executable_deleter)(SerializedExecutable*);  // out
};
struct ExecutableDeserializeAndLoadArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
  const char* serialized_executable;
  size_t serialized_executable_size;
  LoadedExecutable* loaded_executable;                // out
  const char* overridden_serialized_compile_options;  // null: the executable's own
  size_t overridden_serialized_compile_options_size;
};
struct LoadedExecutableDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  LoadedExecutable* executable;
};
struct LoadedExecutableGetExecutableArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  LoadedExecutable* loaded_executable;
  Executable* executable;  // out, destroyed by the caller
};
struct ExecuteOptions {
  size_t struct_size;
  ExtensionBase* extension_start;
  void** send_callbacks;
  void** recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id;
  const int64_t* non_donatable_input_indices;
  size_t num_non_donatable_input_indices;
  void* context;
  const char* call_location;
  size_t num_tasks;
  int* task_ids;
  int64_t* incarnation_ids;
};
struct LoadedExecutableExecuteArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  LoadedExecutable* executable;
  ExecuteOptions* options;
  Buffer* const* const* argument_lists;  // [num_devices][num_args]
  size_t num_devices;
  size_t num_args;
  Buffer** const* output_lists;    // [num_devices][num_outputs], filled by the plugin
  Event** device_complete_events;  // [num_devices], optional
  Device* execute_device;          // null: the devices chosen at compile time
};

// ---- buffers ----
struct BufferDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Buffer* buffer;
};
struct BufferToHostBufferArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Buffer* src;
  void* host_layout;  // null: dense, row-major
  void* dst;
  size_t dst_size;
  Event* event;  // out: ready when the copy is done
};

template <typename Args>
using Function = Error*(Args* args);
using Unused = void*;

// The function table, in ABI order (the index of each slot in the comment).
struct Api {
  size_t struct_size;
  ExtensionBase* extension_start;
  ApiVersion pjrt_api_version;
  void (*error_destroy)(ErrorDestroyArgs*);                                       // 0
  void (*error_message)(ErrorMessageArgs*);                                       // 1
  Function<ErrorGetCodeArgs>* error_get_code;                                     // 2
  Function<PluginInitializeArgs>* plugin_initialize;                              // 3
  Function<PluginAttributesArgs>* plugin_attributes;                              // 4
  Function<EventDestroyArgs>* event_destroy;                                      // 5
  Unused event_is_ready_and_error[2];                                             // 6-7
  Function<EventAwaitArgs>* event_await;                                          // 8
  Unused event_on_ready;                                                          // 9
  Function<ClientCreateArgs>* client_create;                                      // 10
  Function<ClientDestroyArgs>* client_destroy;                                    // 11
  Function<ClientStringArgs>* client_platform_name;                               // 12
  Unused client_process_index;                                                    // 13
  Function<ClientStringArgs>* client_platform_version;                            // 14
  Unused client_devices;                                                          // 15
  Function<ClientAddressableDevicesArgs>* client_addressable_devices;             // 16
  Unused client_lookups_and_memories[3];                                          // 17-19
  Function<ClientCompileArgs>* client_compile;                                    // 20
  Unused client_default_device_assignment;                                        // 21
  Function<ClientBufferFromHostBufferArgs>* client_buffer_from_host_buffer;       // 22
  Function<DeviceDescriptionIdArgs>* device_description_id;                       // 23
  Unused device_description_process_index_and_attributes[2];                      // 24-25
  Function<DeviceDescriptionKindArgs>* device_description_kind;                   // 26
  Unused device_description_strings[2];                                           // 27-28
  Function<DeviceGetDescriptionArgs>* device_get_description;                     // 29
  Unused device_queries_and_memories[10];                                         // 30-39
  Function<ExecutableDestroyArgs>* executable_destroy;                            // 40
  Unused executable_name_and_counts[3];                                           // 41-43
  Function<ExecutableNumOutputsArgs>* executable_num_outputs;                     // 44
  Unused executable_queries[4];                                                   // 45-48
  Function<ExecutableSerializeArgs>* executable_serialize;                        // 49
  Function<LoadedExecutableDestroyArgs>* loaded_executable_destroy;               // 50
  Function<LoadedExecutableGetExecutableArgs>* loaded_executable_get_executable;  // 51
  Unused loaded_executable_queries[3];                                            // 52-54
  Function<LoadedExecutableExecuteArgs>* loaded_executable_execute;               // 55
  Function<ExecutableDeserializeAndLoadArgs>* executable_deserialize_and_load;    // 56
  Unused loaded_executable_fingerprint;                                           // 57
  Function<BufferDestroyArgs>* buffer_destroy;                                    // 58
  Unused buffer_queries[11];                                                      // 59-69
  Function<BufferToHostBufferArgs>* buffer_to_host_buffer;                        // 70
};

// An argument struct with every field zero and struct_size set, as each call expects.
template <typename Args>
Args make_args() {
  Args args{};
  args.struct_size = sizeof(Args);
  return args;
}

// The bytes of the table a plugin must provide for every slot above to be present.
inline constexpr size_t kApiBytesUsed = offsetof(Api, buffer_to_host_buffer) + sizeof(void*);

}  // namespace kiln::pjrt::abi
