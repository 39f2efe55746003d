// Kiln's declarations of the PJRT C API (pjrt_abi.h) against the header a plugin package ships
// (pjrt_c_api.h of xla-cpu-pjrt, found by CMake): every struct's size, every field and table slot
// Kiln uses at the same offset, the same enum values and major version. The checks are
// static_asserts, so a mismatch fails the build; without the header the test is skipped.
#include <gtest/gtest.h>

#include "kiln/backends/pjrt/pjrt_abi.h"
#include "support/testing.h"

#ifdef KILN_HAVE_PJRT_C_API_HEADER
#include <pjrt_c_api.h>

namespace kiln::pjrt::abi {
namespace {

#define KILN_SAME_SIZE(ours, theirs) \
  static_assert(sizeof(ours) == sizeof(theirs), "size of " #ours " differs from " #theirs)
#define KILN_SAME_OFFSET(ours, our_field, theirs, their_field)                           \
  static_assert(offsetof(ours, our_field) == offsetof(theirs, their_field), #ours "::" #our_field \
                " is not at the offset of " #theirs "::" #their_field)

static_assert(kMajorVersion == PJRT_API_MAJOR);
static_assert(kMinimumMinorVersion <= PJRT_API_MINOR);

KILN_SAME_SIZE(ApiVersion, PJRT_Api_Version);
KILN_SAME_SIZE(NamedValue, PJRT_NamedValue);
KILN_SAME_OFFSET(NamedValue, value_size, PJRT_NamedValue, value_size);
KILN_SAME_SIZE(ErrorDestroyArgs, PJRT_Error_Destroy_Args);
KILN_SAME_SIZE(ErrorMessageArgs, PJRT_Error_Message_Args);
KILN_SAME_SIZE(ErrorGetCodeArgs, PJRT_Error_GetCode_Args);
KILN_SAME_OFFSET(ErrorGetCodeArgs, code, PJRT_Error_GetCode_Args, code);
KILN_SAME_SIZE(PluginInitializeArgs, PJRT_Plugin_Initialize_Args);
KILN_SAME_SIZE(PluginAttributesArgs, PJRT_Plugin_Attributes_Args);
KILN_SAME_SIZE(EventDestroyArgs, PJRT_Event_Destroy_Args);
KILN_SAME_SIZE(EventAwaitArgs, PJRT_Event_Await_Args);
KILN_SAME_SIZE(ClientCreateArgs, PJRT_Client_Create_Args);
KILN_SAME_OFFSET(ClientCreateArgs, client, PJRT_Client_Create_Args, client);
KILN_SAME_SIZE(ClientDestroyArgs, PJRT_Client_Destroy_Args);
KILN_SAME_SIZE(ClientStringArgs, PJRT_Client_PlatformName_Args);
KILN_SAME_OFFSET(ClientStringArgs, value_size, PJRT_Client_PlatformName_Args, platform_name_size);
KILN_SAME_SIZE(ClientStringArgs, PJRT_Client_PlatformVersion_Args);
KILN_SAME_OFFSET(ClientStringArgs, value_size, PJRT_Client_PlatformVersion_Args,
                 platform_version_size);
KILN_SAME_SIZE(ClientAddressableDevicesArgs, PJRT_Client_AddressableDevices_Args);
KILN_SAME_SIZE(Program, PJRT_Program);
KILN_SAME_OFFSET(Program, format, PJRT_Program, format);
KILN_SAME_SIZE(ClientCompileArgs, PJRT_Client_Compile_Args);
KILN_SAME_OFFSET(ClientCompileArgs, executable, PJRT_Client_Compile_Args, executable);
KILN_SAME_SIZE(ClientBufferFromHostBufferArgs, PJRT_Client_BufferFromHostBuffer_Args);
KILN_SAME_OFFSET(ClientBufferFromHostBufferArgs, type, PJRT_Client_BufferFromHostBuffer_Args, type);
KILN_SAME_OFFSET(ClientBufferFromHostBufferArgs, host_buffer_semantics,
                 PJRT_Client_BufferFromHostBuffer_Args, host_buffer_semantics);
KILN_SAME_OFFSET(ClientBufferFromHostBufferArgs, buffer, PJRT_Client_BufferFromHostBuffer_Args,
                 buffer);
KILN_SAME_SIZE(DeviceGetDescriptionArgs, PJRT_Device_GetDescription_Args);
KILN_SAME_SIZE(DeviceDescriptionIdArgs, PJRT_DeviceDescription_Id_Args);
KILN_SAME_SIZE(DeviceDescriptionKindArgs, PJRT_DeviceDescription_Kind_Args);
KILN_SAME_SIZE(ExecutableDestroyArgs, PJRT_Executable_Destroy_Args);
KILN_SAME_SIZE(ExecutableNumOutputsArgs, PJRT_Executable_NumOutputs_Args);
KILN_SAME_SIZE(ExecutableSerializeArgs, PJRT_Executable_Serialize_Args);
KILN_SAME_OFFSET(ExecutableSerializeArgs, serialized_bytes_size, PJRT_Executable_Serialize_Args,
                 serialized_bytes_size);
KILN_SAME_OFFSET(ExecutableSerializeArgs, serialized_executable_deleter,
                 PJRT_Executable_Serialize_Args, serialized_executable_deleter);
KILN_SAME_SIZE(ExecutableDeserializeAndLoadArgs, PJRT_Executable_DeserializeAndLoad_Args);
KILN_SAME_OFFSET(ExecutableDeserializeAndLoadArgs, loaded_executable,
                 PJRT_Executable_DeserializeAndLoad_Args, loaded_executable);
KILN_SAME_OFFSET(ExecutableDeserializeAndLoadArgs, overridden_serialized_compile_options_size,
                 PJRT_Executable_DeserializeAndLoad_Args,
                 overridden_serialized_compile_options_size);
KILN_SAME_SIZE(LoadedExecutableDestroyArgs, PJRT_LoadedExecutable_Destroy_Args);
KILN_SAME_SIZE(LoadedExecutableGetExecutableArgs, PJRT_LoadedExecutable_GetExecutable_Args);
KILN_SAME_SIZE(ExecuteOptions, PJRT_ExecuteOptions);
KILN_SAME_OFFSET(ExecuteOptions, launch_id, PJRT_ExecuteOptions, launch_id);
KILN_SAME_SIZE(LoadedExecutableExecuteArgs, PJRT_LoadedExecutable_Execute_Args);
KILN_SAME_OFFSET(LoadedExecutableExecuteArgs, device_complete_events,
                 PJRT_LoadedExecutable_Execute_Args, device_complete_events);
KILN_SAME_SIZE(BufferDestroyArgs, PJRT_Buffer_Destroy_Args);
KILN_SAME_SIZE(BufferToHostBufferArgs, PJRT_Buffer_ToHostBuffer_Args);
KILN_SAME_OFFSET(BufferToHostBufferArgs, event, PJRT_Buffer_ToHostBuffer_Args, event);

KILN_SAME_OFFSET(Api, pjrt_api_version, PJRT_Api, pjrt_api_version);
KILN_SAME_OFFSET(Api, error_destroy, PJRT_Api, PJRT_Error_Destroy);
KILN_SAME_OFFSET(Api, error_message, PJRT_Api, PJRT_Error_Message);
KILN_SAME_OFFSET(Api, error_get_code, PJRT_Api, PJRT_Error_GetCode);
KILN_SAME_OFFSET(Api, plugin_initialize, PJRT_Api, PJRT_Plugin_Initialize);
KILN_SAME_OFFSET(Api, plugin_attributes, PJRT_Api, PJRT_Plugin_Attributes);
KILN_SAME_OFFSET(Api, event_destroy, PJRT_Api, PJRT_Event_Destroy);
KILN_SAME_OFFSET(Api, event_await, PJRT_Api, PJRT_Event_Await);
KILN_SAME_OFFSET(Api, client_create, PJRT_Api, PJRT_Client_Create);
KILN_SAME_OFFSET(Api, client_destroy, PJRT_Api, PJRT_Client_Destroy);
KILN_SAME_OFFSET(Api, client_platform_name, PJRT_Api, PJRT_Client_PlatformName);
KILN_SAME_OFFSET(Api, client_platform_version, PJRT_Api, PJRT_Client_PlatformVersion);
KILN_SAME_OFFSET(Api, client_addressable_devices, PJRT_Api, PJRT_Client_AddressableDevices);
KILN_SAME_OFFSET(Api, client_compile, PJRT_Api, PJRT_Client_Compile);
KILN_SAME_OFFSET(Api, client_buffer_from_host_buffer, PJRT_Api,
                 PJRT_Client_BufferFromHostBuffer);
KILN_SAME_OFFSET(Api, device_description_id, PJRT_Api, PJRT_DeviceDescription_Id);
KILN_SAME_OFFSET(Api, device_description_kind, PJRT_Api, PJRT_DeviceDescription_Kind);
KILN_SAME_OFFSET(Api, device_get_description, PJRT_Api, PJRT_Device_GetDescription);
KILN_SAME_OFFSET(Api, executable_destroy, PJRT_Api, PJRT_Executable_Destroy);
KILN_SAME_OFFSET(Api, executable_num_outputs, PJRT_Api, PJRT_Executable_NumOutputs);
KILN_SAME_OFFSET(Api, executable_serialize, PJRT_Api, PJRT_Executable_Serialize);
KILN_SAME_OFFSET(Api, loaded_executable_destroy, PJRT_Api, PJRT_LoadedExecutable_Destroy);
KILN_SAME_OFFSET(Api, loaded_executable_get_executable, PJRT_Api,
                 PJRT_LoadedExecutable_GetExecutable);
KILN_SAME_OFFSET(Api, loaded_executable_execute, PJRT_Api, PJRT_LoadedExecutable_Execute);
KILN_SAME_OFFSET(Api, executable_deserialize_and_load, PJRT_Api,
                 PJRT_Executable_DeserializeAndLoad);
KILN_SAME_OFFSET(Api, buffer_destroy, PJRT_Api, PJRT_Buffer_Destroy);
KILN_SAME_OFFSET(Api, buffer_to_host_buffer, PJRT_Api, PJRT_Buffer_ToHostBuffer);

static_assert(static_cast<int>(BufferType::pred) == PJRT_Buffer_Type_PRED);
static_assert(static_cast<int>(BufferType::s32) == PJRT_Buffer_Type_S32);
static_assert(static_cast<int>(BufferType::s64) == PJRT_Buffer_Type_S64);
static_assert(static_cast<int>(BufferType::u32) == PJRT_Buffer_Type_U32);
static_assert(static_cast<int>(BufferType::f16) == PJRT_Buffer_Type_F16);
static_assert(static_cast<int>(BufferType::f32) == PJRT_Buffer_Type_F32);
static_assert(static_cast<int>(BufferType::f64) == PJRT_Buffer_Type_F64);
static_assert(static_cast<int>(BufferType::bf16) == PJRT_Buffer_Type_BF16);
static_assert(static_cast<int>(HostBufferSemantics::immutable_only_during_call) ==
              PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
static_assert(static_cast<int>(NamedValueType::boolean) == PJRT_NamedValue_kBool);

}  // namespace
}  // namespace kiln::pjrt::abi
#endif

TEST(PjrtAbi, DeclarationsMatchThePackagedHeader) {
#ifdef KILN_HAVE_PJRT_C_API_HEADER
  SUCCEED() << "checked at compile time against pjrt_c_api.h " << PJRT_API_MAJOR << "."
            << PJRT_API_MINOR;
#else
  KILN_SKIP_UNLESS(false,
                   "no pjrt_c_api.h found at configure time (pip install xla-cpu-pjrt, or "
                   "-DKILN_PJRT_CPU_PLUGIN=.../xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so)");
#endif
}
