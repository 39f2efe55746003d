// Protobuf wire format for the few fields Kiln sets (see compile_options_proto.h): a field is a
// varint key (number << 3 | wire type) then a varint (type 0) or a length-prefixed body (type 2).
#include "kiln/backends/pjrt/compile_options_proto.h"

#include <cstdint>

#include "kiln/ir/error.h"

namespace kiln::pjrt {
namespace {

constexpr uint64_t kVarint = 0;
constexpr uint64_t kLengthDelimited = 2;

void varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void int_field(std::string& out, uint64_t number, uint64_t value) {
  varint(out, number << 3 | kVarint);
  varint(out, value);
}

void message_field(std::string& out, uint64_t number, const std::string& body) {
  varint(out, number << 3 | kLengthDelimited);
  varint(out, body.size());
  out += body;
}

}  // namespace

std::string compile_options(int replicas) {
  check(replicas >= 1, "pjrt", "replicas must be at least 1, got ", replicas);
  std::string build_options;
  int_field(build_options, 4, static_cast<uint64_t>(replicas));  // num_replicas
  int_field(build_options, 5, 1);                                 // num_partitions
  std::string options;
  message_field(options, 3, build_options);  // executable_build_options
  return options;
}


}  // namespace kiln::pjrt
