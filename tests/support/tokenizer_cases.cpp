// Reading and running the tokenizer fixture generators' cases.
#include "support/tokenizer_cases.h"

#include <gtest/gtest.h>

#include <sstream>

#include "kiln/ir/error.h"

namespace kiln::testing {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

uint64_t fnv1a64(const std::vector<int64_t>& values) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (int64_t value : values) {
    auto v = static_cast<uint32_t>(static_cast<int32_t>(value));
    for (int byte = 0; byte < 4; ++byte) {
      h = (h ^ ((v >> (8 * byte)) & 0xFF)) * 0x100000001B3ull;
    }
  }
  return h;
}

std::string hex(uint64_t value, int digits) {
  std::ostringstream out;
  out << std::hex;
  out.width(digits);
  out.fill('0');
  out << value;
  return out.str();
}

std::string offsets_text(const std::vector<CharRange>& offsets) {
  std::string out;
  for (const CharRange& o : offsets) {
    out += (out.empty() ? "" : " ") + std::to_string(o.start) + ":" + std::to_string(o.end);
  }
  return out;
}

std::string row_text(const Encoding& e) {
  return joined(e.ids) + " | " + joined(e.type_ids) + " | " + joined(e.attention_mask) + " | " +
         joined(e.special_tokens_mask) + " | " + offsets_text(e.offsets) + " | " +
         joined(e.word_ids) + " | " + joined(e.sequence_ids);
}

EncodeOptions options_from(const nlohmann::json& json) {
  EncodeOptions o;
  const std::string truncation = json.value("truncation", "do_not_truncate");
  if (truncation == "longest_first") o.truncation = Truncation::longest_first;
  if (truncation == "only_first") o.truncation = Truncation::only_first;
  if (truncation == "only_second") o.truncation = Truncation::only_second;
  const std::string padding = json.value("padding", "do_not_pad");
  if (padding == "longest") o.padding = Padding::longest;
  if (padding == "max_length") o.padding = Padding::max_length;
  if (json.contains("max_length")) o.max_length = json["max_length"].get<size_t>();
  o.stride = json.value("stride", size_t{0});
  o.pad_to_multiple_of = json.value("pad_to_multiple_of", size_t{0});
  o.add_special_tokens = json.value("add_special_tokens", true);
  o.truncation_side = json.value("truncation_side", "right") == "left" ? Side::left : Side::right;
  o.padding_side = json.value("padding_side", "right") == "left" ? Side::left : Side::right;
  return o;
}

std::string describe_case(const nlohmann::json& c) {
  std::string text = c["texts"].dump();
  if (c.contains("pairs")) text += " + " + c["pairs"].dump();
  return c["tokenizer"].get<std::string>() + " " + text + " " + c["options"].dump();
}

void check_tokenizer_case(const Tokenizer& tokenizer, const nlohmann::json& c,
                          const EncodeOptions& options, CaseCounts& counts) {
  std::vector<std::string> texts = c["texts"].get<std::vector<std::string>>();
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<std::string> pairs;
  if (c.contains("pairs")) pairs = c["pairs"].get<std::vector<std::string>>();
  std::vector<std::string_view> pair_views(pairs.begin(), pairs.end());
  auto run = [&] {
    return pairs.empty() ? tokenizer.encode_batch(views, options)
                         : tokenizer.encode_pair_batch(views, pair_views, options);
  };
  if (c.contains("error")) {
    EXPECT_THROW(run(), Error) << "HF: " << c["error"];
    ++counts.errors;
    return;
  }
  const std::vector<Encoding> batch = run();
  std::vector<std::string> actual, samples;
  for (size_t b = 0; b < batch.size(); ++b) {
    actual.push_back(row_text(batch[b]));
    samples.push_back(std::to_string(b));
    for (const Encoding& window : batch[b].overflowing) {
      actual.push_back(row_text(window));
      samples.push_back(std::to_string(b));
    }
  }
  EXPECT_EQ(actual, c["rows"].get<std::vector<std::string>>());
  std::vector<std::string> expected_samples;
  for (const nlohmann::json& s : c["sample"])
    expected_samples.push_back(std::to_string(s.get<int>()));
  EXPECT_EQ(samples, expected_samples);
  if (c.contains("decoded")) {
    EXPECT_EQ(tokenizer.decode(batch[0].ids), c["decoded"].get<std::string>());
  }
  ++counts.compared;
}

}  // namespace kiln::testing
