// TensorBoard event records without protobuf: the `Event` message (tensorboard/compat/proto/
// event.proto, summary.proto) encoded by hand, framed as TFRecords, and read back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// Summary.Value with the `simple_value` member of its oneof (what TensorBoard shows as a scalar).
struct TensorBoardScalar {
  std::string tag;
  float value = 0.0f;
};

// The fields of `Event` that Kiln writes. Field numbers: wall_time 1 (double), step 2 (int64),
// file_version 3 (string, first event of a file only), summary 5, source_metadata 10.
struct TensorBoardEvent {
  double wall_time = 0.0;
  int64_t step = 0;
  std::string file_version;
  std::string source_writer;  // SourceMetadata.writer (field 1)
  std::vector<TensorBoardScalar> scalars;  // Summary.value (field 1), empty: no summary
};

// The serialized message, byte for byte as protobuf writes it: fields in number order, proto3
// defaults (0, "") left out.
std::string tensorboard_encode_event(const TensorBoardEvent& event);

// Parses one message; unknown fields are skipped. Throws Error("[where] ...") on malformed bytes.
TensorBoardEvent tensorboard_decode_event(std::string_view data, std::string_view where);

// One TFRecord: u64 length, masked CRC-32C of the length, data, masked CRC-32C of the data
// (little-endian).
std::string tfrecord_frame(std::string_view data);

// The records of a TFRecord stream, each checked against both CRCs; `where` names the file in
// errors, with the byte offset of the bad record.
std::vector<std::string> tfrecord_split(std::string_view bytes, std::string_view where);

// All events of one event file.
std::vector<TensorBoardEvent> tensorboard_read_events(const std::string& path);

}  // namespace kiln
