// The compile options PJRT_Client_Compile takes: a serialized xla.CompileOptionsProto, written
// here in protobuf wire format by hand (Kiln has no protobuf dependency).
#pragma once

#include <string>

namespace kiln::pjrt {

// CompileOptionsProto{executable_build_options (3): ExecutableBuildOptionsProto{num_replicas (4)
// = replicas, num_partitions (5) = 1}}: one device per replica, everything else XLA's defaults.
std::string compile_options(int replicas);

}  // namespace kiln::pjrt
