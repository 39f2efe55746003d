// safetensors: round trips for every dtype, byte parity with the Python library, crash-safe
// writing, and a clear error naming the file and tensor for each kind of malformed file.
#include "kiln/io/safetensors.h"
#include "support/testing.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

using testing::scratch_folder;

namespace fs = std::filesystem;

const fs::path kFixture =
    fs::path(KILN_SOURCE_DIR) / "tests/data/io/python_all_dtypes.safetensors";

// A fresh folder per test under gtest's temporary directory.
std::vector<std::byte> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

std::string write_file(const fs::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return path.string();
}

// An 8-byte little-endian length, then `header`, then `data_bytes` bytes counting up from 0.
std::vector<std::byte> file_bytes(std::string_view header, size_t data_bytes, uint64_t length) {
  std::vector<std::byte> bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::byte>((length >> (8 * i)) & 0xFF));
  for (char c : header) bytes.push_back(static_cast<std::byte>(c));
  for (size_t i = 0; i < data_bytes; ++i) bytes.push_back(static_cast<std::byte>(i));
  return bytes;
}
std::vector<std::byte> file_bytes(std::string_view header, size_t data_bytes) {
  return file_bytes(header, data_bytes, header.size());
}

// The message of the Error that `action` throws ("" and a test failure when none).
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no kiln::Error thrown";
  return "";
}

// Writes `bytes` as model.safetensors, opens it, and checks the error names the file and `parts`.
void expect_open_error(const std::vector<std::byte>& bytes,
                       std::initializer_list<std::string> parts) {
  std::string path = write_file(scratch_folder() / "model.safetensors", bytes);
  std::string message = error_of([&] { SafetensorsFile file(path); });
  EXPECT_TRUE(message.starts_with("[" + path + "] ")) << message;
  for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0);
}

std::map<std::string, Tensor> every_dtype() {
  std::map<std::string, Tensor> tensors;
  std::vector<double> values = {0.0, 1.0, -2.5, 3.25, 100.0, -0.125};
  for (int i = 0; i < kNumDTypes; ++i) {
    auto dtype = static_cast<DType>(i);
    std::vector<double> cast = values;
    for (double& v : cast) {
      if (dtype == DType::u32) v = std::abs(v);
      if (dtype == DType::boolean) v = v > 0 ? 1 : 0;
    }
    tensors.emplace("t." + std::string(dtype_name(dtype)),
                    Tensor::from_doubles(dtype, {2, 3}, cast));
  }
  tensors.emplace("scalar", Tensor::scalar(DType::f64, -7.5));
  tensors.emplace("empty", Tensor(DType::f32, {0, 5}));
  return tensors;
}

TEST(Safetensors, RoundTripEveryDtype) {
  std::string path = (scratch_folder() / "model.safetensors").string();
  std::map<std::string, Tensor> tensors = every_dtype();
  safetensors_write(path, tensors, {{"format", "pt"}, {"note", "round trip"}});
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  SafetensorsFile file(path);
  EXPECT_EQ(file.metadata(),
            (std::map<std::string, std::string>{{"format", "pt"}, {"note", "round trip"}}));
  // Data order: largest alignment first (i64, f64, f32, u32, i32, bf16, f16, bool), then names.
  EXPECT_EQ(file.names(),
            (std::vector<std::string>{"t.i64", "scalar", "t.f64", "empty", "t.f32", "t.u32",
                                      "t.i32", "t.bf16", "t.f16", "t.bool"}));
  for (const auto& [name, tensor] : tensors) {
    SCOPED_TRACE(name);
    Tensor read = file.to_tensor(name);
    EXPECT_TRUE(same_bytes(read, tensor));
    EXPECT_EQ(read.to_doubles(), tensor.to_doubles());
    const SafetensorsView& view = file.get(name);
    EXPECT_EQ(view.dtype_tag, safetensors_dtype_tag(tensor.dtype()));
    // Views point into the mapping, aligned for their element type.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view.bytes.data()) % dtype_size(tensor.dtype()), 0u);
  }
  EXPECT_EQ(file.to_tensor("t.bf16").to_doubles(),
            (std::vector<double>{0, 1, -2.5, 3.25, 100, -0.125}));
}

TEST(Safetensors, ReadsThePythonLibraryFileExactly) {
  SafetensorsFile file(kFixture.string());
  EXPECT_EQ(file.metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  EXPECT_EQ(file.names(),
            (std::vector<std::string>{"i64.scalar", "f64.vector", "a.f32", "empty.f32",
                                      "f32.matrix", "u32.vector", "i32.vector", "bf16.vector",
                                      "f16.vector", "bool.matrix"}));
  EXPECT_EQ(file.to_tensor("f32.matrix").to_doubles(),
            (std::vector<double>{0.0, 1.5, -2.25, static_cast<double>(3e38f), -0.0,
                                 static_cast<double>(1e-30f)}));
  EXPECT_EQ(file.to_tensor("f32.matrix").shape(), (Shape{2, 3}));
  EXPECT_EQ(file.to_tensor("f64.vector").to_doubles(), (std::vector<double>{1.0 / 3, -1e300, 2.5}));
  EXPECT_EQ(file.to_tensor("f16.vector").to_doubles(), (std::vector<double>{1, -2, 0.5, 65504}));
  EXPECT_EQ(file.to_tensor("bf16.vector").to_doubles(), (std::vector<double>{1, -3, 0.15625}));
  EXPECT_EQ(file.to_tensor("i32.vector").to_doubles(), (std::vector<double>{-1, 0, 2147483647}));
  Tensor scalar = file.to_tensor("i64.scalar");
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(scalar.data_as<int64_t>()[0], -9007199254740993);  // not a double: the bytes are copied
  EXPECT_EQ(file.to_tensor("u32.vector").to_doubles(), (std::vector<double>{0, 4294967295.0}));
  EXPECT_EQ(file.to_tensor("bool.matrix").to_doubles(), (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(file.to_tensor("empty.f32").shape(), (Shape{0, 4}));
  EXPECT_EQ(file.to_tensor("a.f32").to_doubles(), std::vector<double>{7.0});
}

TEST(Safetensors, WritesTheSameBytesAsThePythonLibrary) {
  SafetensorsFile file(kFixture.string());
  std::map<std::string, Tensor> tensors;
  for (const std::string& name : file.names()) tensors.emplace(name, file.to_tensor(name));
  std::vector<std::byte> expected = read_file(kFixture);
  EXPECT_EQ(safetensors_serialize(tensors, file.metadata()), expected);

  std::string path = (scratch_folder() / "copy.safetensors").string();
  safetensors_write(path, tensors, file.metadata());
  EXPECT_EQ(read_file(path), expected);
}

TEST(Safetensors, HeaderLayoutMatchesTheReferenceLibrary) {
  // The Rust library's own unit test: one F32 tensor "attn.0" of shape (1,2,3), no metadata.
  std::map<std::string, Tensor> tensors = {
      {"attn.0", Tensor::from_doubles(DType::f32, {1, 2, 3}, {0, 1, 2, 3, 4, 5})}};
  std::vector<std::byte> bytes = safetensors_serialize(tensors, {});
  std::string header = R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})";
  ASSERT_EQ(bytes.size(), 8 + header.size() + 24);
  EXPECT_EQ(std::to_integer<int>(bytes[0]), 64);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()) + 8, header.size()), header);
  // No tensors: "{}" padded with six spaces to 8 bytes.
  std::vector<std::byte> empty = safetensors_serialize({}, {});
  EXPECT_EQ(empty, file_bytes("{}      ", 0));
  EXPECT_TRUE(safetensors_parse(empty, "empty").tensors.empty());
}

TEST(Safetensors, ParsesABufferWithSpacePaddedHeader) {
  std::string header = R"({"b":{"dtype":"I32","shape":[1],"data_offsets":[4,8]},)"
                       R"("a":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}   )";
  std::vector<std::byte> bytes = file_bytes(header, 8);
  SafetensorsContents contents = safetensors_parse(bytes, "buffer");
  ASSERT_EQ(contents.tensors.size(), 2u);
  EXPECT_EQ(contents.tensors[0].name, "b");  // header order, not data order
  EXPECT_EQ(contents.tensors[0].bytes.data(), bytes.data() + 8 + header.size() + 4);
  EXPECT_EQ(safetensors_to_tensor(contents.tensors[1], "buffer").data_as<int32_t>()[0], 0x03020100);
  EXPECT_TRUE(contents.metadata.empty());
}

TEST(Safetensors, OverwriteIsAtomicAndAFailedWriteKeepsTheOldFile) {
  fs::path folder = scratch_folder();
  std::string path = (folder / "model.safetensors").string();
  safetensors_write(path, {{"w", Tensor::from_doubles(DType::f32, {2}, {1, 2})}});
  safetensors_write(path, {{"w", Tensor::from_doubles(DType::f32, {3}, {4, 5, 6})}});
  EXPECT_EQ(SafetensorsFile(path).to_tensor("w").to_doubles(), (std::vector<double>{4, 5, 6}));

  std::string message = error_of([&] { safetensors_write(path, {{"bad", Tensor()}}); });
  EXPECT_NE(message.find("tensor 'bad'"), std::string::npos) << message;
  EXPECT_EQ(SafetensorsFile(path).to_tensor("w").to_doubles(), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1);

  std::string missing = (folder / "no/such/folder/model.safetensors").string();
  message = error_of([&] { safetensors_write(missing, {{"w", Tensor(DType::f32, {1})}}); });
  EXPECT_TRUE(message.starts_with("[" + missing + "] ")) << message;
}

TEST(Safetensors, WriterRejectsWhatPythonCouldNotRead) {
  std::string message = error_of([] {
    safetensors_serialize({{"__metadata__", Tensor(DType::f32, {1})}});
  });
  EXPECT_NE(message.find("reserved"), std::string::npos) << message;
  message = error_of([] { safetensors_serialize({{"bad\xff", Tensor(DType::f32, {1})}}); });
  EXPECT_NE(message.find("UTF-8"), std::string::npos) << message;
}

TEST(Safetensors, MissingTensorAndWrongShapeNameTheTensor) {
  std::string path = (scratch_folder() / "model.safetensors").string();
  safetensors_write(path, {{"bert.pooler.dense.weight", Tensor(DType::f32, {4, 4})}});
  SafetensorsFile file(path);
  EXPECT_TRUE(file.contains("bert.pooler.dense.weight"));
  EXPECT_FALSE(file.contains("classifier.weight"));
  std::string message = error_of([&] { file.get("classifier.weight"); });
  EXPECT_EQ(message, "[" + path +
                         "] tensor 'classifier.weight': not in the file (it has 1 tensors, "
                         "e.g. 'bert.pooler.dense.weight')");
  message = error_of([&] { file.to_tensor("bert.pooler.dense.weight", {8, 8}); });
  EXPECT_EQ(message, "[" + path +
                         "] tensor 'bert.pooler.dense.weight': shape (4,4) does not match "
                         "the expected (8,8) (does config.json fit these weights?)");
  EXPECT_EQ(file.to_tensor("bert.pooler.dense.weight", {4, 4}).shape(), (Shape{4, 4}));
}

TEST(Safetensors, UnsupportedDtypeIsReadableButNotConvertible) {
  std::vector<std::byte> bytes =
      file_bytes(R"({"q":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}})", 2);
  std::string path = write_file(scratch_folder() / "model.safetensors", bytes);
  SafetensorsFile file(path);
  EXPECT_EQ(file.get("q").dtype_tag, "I8");
  EXPECT_FALSE(file.get("q").dtype.has_value());
  EXPECT_EQ(file.get("q").bytes.size(), 2u);
  std::string message = error_of([&] { file.to_tensor("q"); });
  EXPECT_EQ(message, "[" + path +
                         "] tensor 'q': dtype I8 is not supported by Kiln (supported: F32, "
                         "F64, BF16, F16, I32, I64, U32, BOOL)");
}

TEST(Safetensors, BoolBytesMustBeZeroOrOne) {
  std::vector<std::byte> bytes =
      file_bytes(R"({"mask":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})", 3);  // 0, 1, 2
  std::string path = write_file(scratch_folder() / "model.safetensors", bytes);
  std::string message = error_of([&] { SafetensorsFile(path).to_tensor("mask"); });
  EXPECT_EQ(message,
            "[" + path + "] tensor 'mask': BOOL element 2 has byte value 2 (expected 0 or 1)");
}

TEST(Safetensors, OpeningAMissingFileNamesIt) {
  std::string path = (scratch_folder() / "absent.safetensors").string();
  std::string message = error_of([&] { SafetensorsFile file(path); });
  EXPECT_EQ(message, "[" + path + "] cannot open: No such file or directory");
}

TEST(SafetensorsErrors, TruncatedLengthField) {
  expect_open_error({}, {"file is 0 bytes", "truncated"});
  expect_open_error(std::vector<std::byte>(5), {"file is 5 bytes", "truncated"});
}

TEST(SafetensorsErrors, HeaderLengthBeyondTheFile) {
  expect_open_error(file_bytes("{}", 0, 4096),
                    {"header length 4096 runs past the end", "truncated"});
}

TEST(SafetensorsErrors, AbsurdHeaderLength) {
  expect_open_error(file_bytes("{}", 0, 200'000'000), {"header length 200000000 is absurd"});
  expect_open_error(file_bytes("{}", 0, ~uint64_t{0}), {"is absurd"});
}

TEST(SafetensorsErrors, InvalidJson) {
  expect_open_error(file_bytes("{\"w\": {\n oops", 0), {"invalid JSON", "line 2"});
  expect_open_error(file_bytes("{\"w\xff\": 1}", 0),
                    {"invalid JSON", "UTF-8", "last read: '\"w\\xFF'"});
  expect_open_error(file_bytes(std::string("{}\0\0", 4), 0), {"header byte 2 is NUL"});
  expect_open_error(file_bytes("[1, 2]", 0), {"header is a JSON array, not an object"});
}

TEST(SafetensorsErrors, MalformedEntries) {
  expect_open_error(file_bytes(R"({"w": 3})", 0), {"tensor 'w': header entry is a JSON number"});
  expect_open_error(file_bytes(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", 4),
                    {"tensor 'w': header entry has no \"dtype\""});
  expect_open_error(
      file_bytes(R"({"w": {"dtype": "F32", "shape": 4, "data_offsets": [0, 16]}})", 16),
      {"tensor 'w': \"shape\" is a JSON number, not an array"});
  expect_open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0]}})", 16),
                    {"tensor 'w': \"data_offsets\" [0] is not two non-negative integers"});
  expect_open_error(file_bytes(R"({"w": {"dtype": 5, "shape": [4], "data_offsets": [0, 16]}})", 16),
                    {"tensor 'w': \"dtype\" is a JSON number, not a string"});
}

TEST(SafetensorsErrors, UnknownDtype) {
  expect_open_error(
      file_bytes(R"({"w": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}})", 16),
      {"tensor 'w': unknown dtype 'F128' (safetensors dtypes: BOOL, F4,"});
}

TEST(SafetensorsErrors, NegativeOrFractionalDims) {
  expect_open_error(
      file_bytes(R"({"w": {"dtype": "F32", "shape": [-1, 4], "data_offsets": [0, 0]}})", 0),
      {"tensor 'w': shape [-1,4] has an entry that is not a non-negative integer"});
  expect_open_error(
      file_bytes(R"({"w": {"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]}})", 8),
      {"tensor 'w': shape [2.0] has an entry"});
}

TEST(SafetensorsErrors, ShapeAndOffsetsDisagree) {
  expect_open_error(
      file_bytes(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}})", 20),
      {"tensor 'w': shape (2,3) of F32 needs 24 bytes but data_offsets [0, 20] hold 20"});
  expect_open_error(
      file_bytes(R"({"w": {"dtype": "F4", "shape": [3], "data_offsets": [0, 1]}})", 1),
      {"tensor 'w': shape (3) of F4 is not a whole number of bytes"});
}

TEST(SafetensorsErrors, ElementCountOverflow) {
  expect_open_error(
      file_bytes(
          R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})",
          0),
      {"tensor 'w': shape [4294967296,4294967296] overflows 64-bit sizes"});
  expect_open_error(
      file_bytes(
          R"({"w": {"dtype": "U8", "shape": [18446744073709551615], "data_offsets": [0, 0]}})", 0),
      {"tensor 'w':", "overflows"});
}

TEST(SafetensorsErrors, ReversedAndOutOfRangeOffsets) {
  expect_open_error(
      file_bytes(R"({"w": {"dtype": "U8", "shape": [0], "data_offsets": [8, 4]}})", 8),
      {"tensor 'w': data_offsets [8, 4] are reversed"});
  expect_open_error(
      file_bytes(R"({"w": {"dtype": "U8", "shape": [8], "data_offsets": [0, 8]}})", 6),
      {"tensor 'w': data_offsets [0, 8] run past the end of the data region (6 bytes)",
       "truncated"});
}

TEST(SafetensorsErrors, TruncatedDataNamesTheCutTensor) {
  std::vector<std::byte> bytes = read_file(kFixture);
  bytes.resize(bytes.size() - 3);  // cuts into the last tensor in data order
  expect_open_error(bytes,
                    {"tensor 'bool.matrix'", "run past the end of the data region", "truncated"});
}

TEST(SafetensorsErrors, OverlappingTensors) {
  expect_open_error(file_bytes(R"({"a": {"dtype": "U8", "shape": [8], "data_offsets": [0, 8]},)"
                               R"("b": {"dtype": "U8", "shape": [8], "data_offsets": [4, 12]}})",
                               12),
                    {"tensor 'b': data_offsets [4, 12] overlap tensor 'a' [0, 8]"});
}

TEST(SafetensorsErrors, GapsAndTrailingBytes) {
  expect_open_error(file_bytes(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},)"
                               R"("b": {"dtype": "U8", "shape": [4], "data_offsets": [6, 10]}})",
                               10),
                    {"tensor 'b': data bytes [4, 6) before it belong to no tensor"});
  expect_open_error(
      file_bytes(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})", 7),
      {"tensor 'a': 3 data bytes after it (the last tensor) belong to no tensor"});
  expect_open_error(file_bytes("{}", 5),
                    {"the header lists no tensors but 5 data bytes follow it"});
}

TEST(SafetensorsErrors, DuplicateNames) {
  expect_open_error(file_bytes(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},)"
                               R"("a": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]}})",
                               8),
                    {"tensor 'a': the header lists it twice"});
}

TEST(SafetensorsErrors, MetadataMustBeStrings) {
  expect_open_error(file_bytes(R"({"__metadata__": {"format": 1}})", 0),
                    {"\"__metadata__\" entry 'format' is a JSON number, not a string"});
  expect_open_error(file_bytes(R"({"__metadata__": ["pt"]})", 0),
                    {"\"__metadata__\" is a JSON array, not an object"});
}

TEST(SafetensorsErrors, BufferParseNamesTheGivenSource) {
  std::vector<std::byte> bytes =
      file_bytes(R"({"w": {"dtype": "X", "shape": [], "data_offsets": [0, 0]}})", 0);
  std::string message = error_of([&] { safetensors_parse(bytes, "shard-3"); });
  EXPECT_TRUE(message.starts_with("[shard-3] tensor 'w': unknown dtype 'X'")) << message;
}

}  // namespace
}  // namespace kiln
