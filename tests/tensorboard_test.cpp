// TensorBoard event files: CRC-32C, the hand-encoded Event message, TFRecord framing, the writer.
#include <filesystem>
#include <fstream>
#include <regex>
#include <tuple>
#include <string>

#include <gtest/gtest.h>

#include "kiln/ir/error.h"
#include "kiln/train/crc32c.h"
#include "kiln/train/tensorboard_event.h"
#include "kiln/train/tensorboard_writer.h"
#include "support/testing.h"

namespace kiln {
namespace {

using testing::scratch_folder;

namespace fs = std::filesystem;

std::string from_hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

TEST(Crc32c, KnownValues) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  // RFC 3720 (iSCSI) appendix B.4 test vectors.
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending += static_cast<char>(i);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
}

TEST(Crc32c, MaskRotatesAndAddsTheConstant) {
  uint32_t crc = 0xE3069283u;
  EXPECT_EQ(crc32c_masked("123456789"), ((crc >> 15) | (crc << 17)) + 0xA282EAD8u);
}

// Event{wall_time: 1.5, step: 3, summary {value {tag: "loss", simple_value: 0.25}}}, by hand:
//   09 <1.5 as LE double>            field 1, fixed64
//   10 03                            field 2, varint 3
//   2a 0d                            field 5, 13 bytes of Summary:
//     0a 0b                            field 1 (Value), 11 bytes:
//       0a 04 "loss"                     field 1, tag
//       15 <0.25 as LE float>            field 2, fixed32
// tensorboard's own event_pb2 serializes this Event to the same bytes.
const std::string kLossEventHex = "09000000000000f83f10032a0d0a0b0a046c6f7373150000803e";

TensorBoardEvent loss_event() {
  TensorBoardEvent event;
  event.wall_time = 1.5;
  event.step = 3;
  event.scalars.push_back({"loss", 0.25f});
  return event;
}

TEST(TensorBoardEvent, EncodesAScalarEventByteForByte) {
  EXPECT_EQ(tensorboard_encode_event(loss_event()), from_hex(kLossEventHex));
}

TEST(TensorBoardEvent, EncodesTheFirstEventAndNegativeSteps) {
  TensorBoardEvent first;
  first.wall_time = 1700000000.25;
  first.file_version = "brain.Event:2";
  first.source_writer = "kiln";
  // 09 <double> | 1a 0d "brain.Event:2" | 52 06 (0a 04 "kiln"): as event_pb2 writes it.
  EXPECT_EQ(tensorboard_encode_event(first),
            from_hex("0900001040fc54d9411a0d627261696e2e4576656e743a3252060a046b696c6e"));
  TensorBoardEvent negative;
  negative.step = -1;  // int64 varint: ten bytes of two's complement; wall_time 0 left out
  EXPECT_EQ(tensorboard_encode_event(negative), from_hex("10ffffffffffffffffff01"));
}

TEST(TensorBoardEvent, FramesARecordAsTensorBoardsRecordWriter) {
  // Made once with tensorboard.summary.writer.record_writer.RecordWriter(io.BytesIO()).write(
  // kLossEventHex bytes): length 26, masked CRC of the length, data, masked CRC of the data.
  std::string expected =
      from_hex("1a00000000000000129bd82d") + from_hex(kLossEventHex) + from_hex("d054b255");
  EXPECT_EQ(tfrecord_frame(from_hex(kLossEventHex)), expected);
}

TEST(TensorBoardEvent, DecodesWhatItEncodes) {
  TensorBoardEvent event = loss_event();
  event.scalars.push_back({"eval/accuracy", 0.0f});
  event.step = 1234567890123;
  TensorBoardEvent back = tensorboard_decode_event(tensorboard_encode_event(event), "test");
  EXPECT_EQ(back.wall_time, 1.5);
  EXPECT_EQ(back.step, 1234567890123);
  ASSERT_EQ(back.scalars.size(), 2u);
  EXPECT_EQ(back.scalars[0].tag, "loss");
  EXPECT_EQ(back.scalars[0].value, 0.25f);
  EXPECT_EQ(back.scalars[1].tag, "eval/accuracy");
  EXPECT_EQ(back.scalars[1].value, 0.0f);
  EXPECT_TRUE(back.file_version.empty());
}

TEST(TensorBoardEvent, RejectsCorruptRecords) {
  std::string two = tfrecord_frame("first") + tfrecord_frame("second");
  std::vector<std::string> records = tfrecord_split(two, "events");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1], "second");

  std::string bad_data = two;
  bad_data[12] ^= 1;  // a byte of "first"
  EXPECT_THROW(
      {
        try {
          tfrecord_split(bad_data, "events");
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "[events] record data CRC mismatch at byte 0");
          throw;
        }
      },
      Error);
  std::string bad_length = two;
  bad_length[21] ^= 1;  // the length of the second record, at byte 21
  EXPECT_THROW(tfrecord_split(bad_length, "events"), Error);
  EXPECT_THROW(tfrecord_split(two.substr(0, two.size() - 2), "events"), Error);
  EXPECT_THROW(tensorboard_decode_event(from_hex("0a05ab"), "event"), Error);  // runs past end
}

TEST(TensorBoardWriter, TagsFollowTransformersRewriteLogs) {
  EXPECT_EQ(tensorboard_tag("loss"), "train/loss");
  EXPECT_EQ(tensorboard_tag("learning_rate"), "train/learning_rate");
  EXPECT_EQ(tensorboard_tag("eval_accuracy"), "eval/accuracy");
  EXPECT_EQ(tensorboard_tag("test_loss"), "test/loss");
}

TEST(TensorBoardWriter, DefaultLoggingDirIsRunsTimestampHost) {
  std::string dir = tensorboard_default_logging_dir("out");
  EXPECT_TRUE(std::regex_match(
      dir, std::regex(R"(out/runs/(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\d\d_)"
                      R"(\d\d-\d\d-\d\d_.+)")))
      << dir;
}

TEST(TensorBoardWriter, WritesEventsThatReadBack) {
  fs::path dir = scratch_folder() / "runs" / "a";
  std::string path;
  {
    TensorBoardWriter writer(dir.string());
    path = writer.path();
    writer.log({{"loss", 0.6931}, {"learning_rate", 2.5e-05}, {"grad_norm", 1.25}, {"epoch", 0.5}},
               10);
    writer.log({{"eval_loss", 0.5}, {"eval_accuracy", 0.75}, {"note", "skipped"}}, 20);
    // Each event is flushed: the file is complete before the writer closes.
    EXPECT_EQ(tensorboard_read_events(path).size(), 1u + 4u + 2u);
  }
  EXPECT_TRUE(std::regex_match(fs::path(path).filename().string(),
                               std::regex(R"(events\.out\.tfevents\.\d{10}\..+\.\d+\.0)")))
      << path;
  std::vector<TensorBoardEvent> events = tensorboard_read_events(path);
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_TRUE(events[0].scalars.empty());
  EXPECT_GT(events[0].wall_time, 1.6e9);
  // Keys come in sorted order (nlohmann's object), each as its own event.
  std::vector<std::tuple<std::string, float, int64_t>> expected = {
      {"train/epoch", 0.5f, 10},      {"train/grad_norm", 1.25f, 10},
      {"train/learning_rate", 2.5e-05f, 10}, {"train/loss", 0.6931f, 10},
      {"eval/accuracy", 0.75f, 20},   {"eval/loss", 0.5f, 20}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const TensorBoardEvent& event = events[i + 1];
    ASSERT_EQ(event.scalars.size(), 1u);
    EXPECT_EQ(event.scalars[0].tag, std::get<0>(expected[i]));
    EXPECT_EQ(event.scalars[0].value, std::get<1>(expected[i]));
    EXPECT_EQ(event.step, std::get<2>(expected[i]));
    EXPECT_GE(event.wall_time, events[0].wall_time);
  }
}

TEST(TensorBoardWriter, ErrorsNameTheFile) {
  fs::path folder = scratch_folder();
  fs::path blocker = folder / "file";
  std::ofstream(blocker) << "not a folder";
  try {
    TensorBoardWriter writer((blocker / "runs").string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((blocker / "runs").string()), std::string::npos)
        << e.what();
  }
  fs::path bad = folder / "events.out.tfevents.bad";
  std::ofstream(bad, std::ios::binary) << "\x05";
  try {
    tensorboard_read_events(bad.string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[" + bad.string() + "] truncated record header at byte 0");
  }
}

}  // namespace
}  // namespace kiln
