// Hand-written protobuf wire format for TensorBoard's Event/Summary messages, and TFRecords.
#include "kiln/train/tensorboard_event.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kiln/ir/error.h"
#include "kiln/train/crc32c.h"

namespace kiln {
namespace {

static_assert(std::endian::native == std::endian::little, "event files are little-endian");

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void put_tag(std::string& out, uint32_t field, WireType type) {
  put_varint(out, (uint64_t{field} << 3) | type);
}

template <typename T>
void put_fixed(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  put_tag(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out.append(bytes);
}

// Reads fields one at a time from a message; every read is bounds-checked.
class WireReader {
 public:
  WireReader(std::string_view data, std::string_view where) : data_(data), where_(where) {}

  bool done() const { return pos_ >= data_.size(); }

  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      check(pos_ < data_.size(), where_, "truncated varint in event");
      auto byte = static_cast<unsigned char>(data_[pos_++]);
      value |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    fail(where_, "varint longer than 10 bytes in event");
  }

  template <typename T>
  T fixed() {
    check(data_.size() - pos_ >= sizeof(T), where_, "truncated fixed-width field in event");
    T value;
    std::memcpy(&value, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  std::string_view bytes() {
    uint64_t length = varint();
    check(length <= data_.size() - pos_, where_, "length-delimited field of ", length,
          " bytes runs past the end of the event");
    std::string_view out = data_.substr(pos_, length);
    pos_ += length;
    return out;
  }

  void skip(uint32_t type) {
    switch (type) {
      case kVarint: varint(); return;
      case kFixed64: fixed<uint64_t>(); return;
      case kLengthDelimited: bytes(); return;
      case kFixed32: fixed<uint32_t>(); return;
      default: fail(where_, "unsupported protobuf wire type ", type, " in event");
    }
  }

  std::string_view where() const { return where_; }

 private:
  std::string_view data_;
  std::string_view where_;
  size_t pos_ = 0;
};

void expect_type(const WireReader& reader, uint32_t type, uint32_t wanted, const char* field) {
  check(type == wanted, reader.where(), "event field ", field, " has wire type ", type,
        ", expected ", wanted);
}

TensorBoardScalar decode_value(std::string_view data, std::string_view where) {
  TensorBoardScalar scalar;
  WireReader reader(data, where);
  while (!reader.done()) {
    uint64_t key = reader.varint();
    auto field = static_cast<uint32_t>(key >> 3), type = static_cast<uint32_t>(key & 7);
    if (field == 1) {
      expect_type(reader, type, kLengthDelimited, "Summary.Value.tag");
      scalar.tag = reader.bytes();
    } else if (field == 2) {
      expect_type(reader, type, kFixed32, "Summary.Value.simple_value");
      scalar.value = reader.fixed<float>();
    } else {
      reader.skip(type);
    }
  }
  return scalar;
}

uint64_t read_u64(std::string_view bytes, size_t at) {
  uint64_t value;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

uint32_t read_u32(std::string_view bytes, size_t at) {
  uint32_t value;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

}  // namespace

std::string tensorboard_encode_event(const TensorBoardEvent& event) {
  std::string out;
  if (event.wall_time != 0.0) {
    put_tag(out, 1, kFixed64);
    put_fixed(out, event.wall_time);
  }
  if (event.step != 0) {
    put_tag(out, 2, kVarint);
    put_varint(out, static_cast<uint64_t>(event.step));  // negative int64: ten bytes, as protobuf
  }
  if (!event.file_version.empty()) put_bytes(out, 3, event.file_version);
  if (!event.scalars.empty()) {
    std::string summary;
    for (const TensorBoardScalar& scalar : event.scalars) {
      std::string value;
      if (!scalar.tag.empty()) put_bytes(value, 1, scalar.tag);
      put_tag(value, 2, kFixed32);  // a oneof member is written even when it is 0
      put_fixed(value, scalar.value);
      put_bytes(summary, 1, value);
    }
    put_bytes(out, 5, summary);
  }
  if (!event.source_writer.empty()) {
    std::string metadata;
    put_bytes(metadata, 1, event.source_writer);
    put_bytes(out, 10, metadata);
  }
  return out;
}

TensorBoardEvent tensorboard_decode_event(std::string_view data, std::string_view where) {
  TensorBoardEvent event;
  WireReader reader(data, where);
  while (!reader.done()) {
    uint64_t key = reader.varint();
    auto field = static_cast<uint32_t>(key >> 3), type = static_cast<uint32_t>(key & 7);
    if (field == 1) {
      expect_type(reader, type, kFixed64, "Event.wall_time");
      event.wall_time = reader.fixed<double>();
    } else if (field == 2) {
      expect_type(reader, type, kVarint, "Event.step");
      event.step = static_cast<int64_t>(reader.varint());
    } else if (field == 3) {
      expect_type(reader, type, kLengthDelimited, "Event.file_version");
      event.file_version = reader.bytes();
    } else if (field == 5) {
      expect_type(reader, type, kLengthDelimited, "Event.summary");
      WireReader summary(reader.bytes(), where);
      while (!summary.done()) {
        uint64_t summary_key = summary.varint();
        auto summary_type = static_cast<uint32_t>(summary_key & 7);
        if ((summary_key >> 3) == 1) {
          expect_type(summary, summary_type, kLengthDelimited, "Summary.value");
          event.scalars.push_back(decode_value(summary.bytes(), where));
        } else {
          summary.skip(summary_type);
        }
      }
    } else if (field == 10) {
      expect_type(reader, type, kLengthDelimited, "Event.source_metadata");
      WireReader metadata(reader.bytes(), where);
      while (!metadata.done()) {
        uint64_t metadata_key = metadata.varint();
        auto metadata_type = static_cast<uint32_t>(metadata_key & 7);
        if ((metadata_key >> 3) == 1 && metadata_type == kLengthDelimited) {
          event.source_writer = metadata.bytes();
        } else {
          metadata.skip(metadata_type);
        }
      }
    } else {
      reader.skip(type);
    }
  }
  return event;
}

std::string tfrecord_frame(std::string_view data) {
  std::string out;
  put_fixed<uint64_t>(out, data.size());
  put_fixed<uint32_t>(out, crc32c_masked(out));
  out.append(data);
  put_fixed<uint32_t>(out, crc32c_masked(data));
  return out;
}

std::vector<std::string> tfrecord_split(std::string_view bytes, std::string_view where) {
  std::vector<std::string> records;
  size_t pos = 0;
  while (pos < bytes.size()) {
    check(bytes.size() - pos >= 12, where, "truncated record header at byte ", pos);
    std::string_view length_bytes = bytes.substr(pos, 8);
    check(read_u32(bytes, pos + 8) == crc32c_masked(length_bytes), where,
          "record length CRC mismatch at byte ", pos);
    uint64_t length = read_u64(bytes, pos);
    check(length <= bytes.size() - pos - 12 && bytes.size() - pos - 12 - length >= 4, where,
          "record at byte ", pos, " claims ", length, " bytes, past the end of the file");
    std::string_view data = bytes.substr(pos + 12, length);
    check(read_u32(bytes, pos + 12 + length) == crc32c_masked(data), where,
          "record data CRC mismatch at byte ", pos);
    records.emplace_back(data);
    pos += 16 + length;
  }
  return records;
}

std::vector<TensorBoardEvent> tensorboard_read_events(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), path, "cannot open event file");
  std::ostringstream contents;
  contents << in.rdbuf();
  std::vector<TensorBoardEvent> events;
  std::vector<std::string> records = tfrecord_split(contents.str(), path);
  for (size_t i = 0; i < records.size(); ++i) {
    std::string where = path + " record " + std::to_string(i);
    events.push_back(tensorboard_decode_event(records[i], where));
  }
  return events;
}

}  // namespace kiln
