// run_qa.py's prepare_train_features / prepare_validation_features over Kiln's tokenizer.
#include "kiln/io/squad_features.h"

#include <algorithm>

#include "kiln/io/python_text.h"
#include "kiln/io/tokenizer_unicode.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

// question.lstrip(): Python's whitespace.
std::string lstrip(std::string_view text, std::string_view where) {
  std::u32string chars = utf8_decode(text, where);
  size_t first = 0;
  while (first < chars.size() && python_is_space(chars[first])) ++first;
  return utf8_encode(std::u32string_view(chars).substr(first));
}

// The answer's token span in one window, exactly as prepare_train_features walks the offsets.
void answer_positions(const SquadExample& example, const Encoding& window, int32_t cls_id,
                      int32_t& start, int32_t& end) {
  auto cls = std::find(window.ids.begin(), window.ids.end(), cls_id);
  const auto cls_index = static_cast<int32_t>(cls == window.ids.end() ? 0 : cls - window.ids.begin());
  start = end = cls_index;
  if (example.answers.empty()) return;
  const size_t start_char = example.answers[0].answer_start;
  const size_t end_char = start_char + utf8_decode(example.answers[0].text, example.where).size();
  const auto& sequence = window.sequence_ids;
  const auto& offsets = window.offsets;
  auto first = std::find(sequence.begin(), sequence.end(), 1);
  if (first == sequence.end()) return;  // no context in the window
  auto token_start = static_cast<size_t>(first - sequence.begin());
  size_t token_end = sequence.size() - 1;
  while (sequence[token_end] != 1) --token_end;
  if (!(offsets[token_start].start <= start_char && offsets[token_end].end >= end_char)) return;
  while (token_start < offsets.size() && offsets[token_start].start <= start_char) ++token_start;
  start = static_cast<int32_t>(token_start) - 1;
  while (offsets[token_end].end >= end_char) --token_end;
  end = static_cast<int32_t>(token_end) + 1;
}

template <typename Index>
void fill_positions(Tensor& out, const std::vector<int32_t>& positions,
                    std::span<const size_t> indices, int64_t padding) {
  auto* data = out.data_as<Index>();
  std::fill(data, data + out.numel(), static_cast<Index>(padding));
  for (size_t row = 0; row < indices.size(); ++row) data[row] = static_cast<Index>(positions[indices[row]]);
}

}  // namespace

QaFeatures QaFeatures::head(size_t count) const {
  const size_t kept = count == 0 ? size() : std::min(count, size());
  QaFeatures out;
  out.source = source;
  out.encodings.assign(encodings.begin(), encodings.begin() + static_cast<std::ptrdiff_t>(kept));
  out.example_of.assign(example_of.begin(), example_of.begin() + static_cast<std::ptrdiff_t>(kept));
  out.start_positions.assign(start_positions.begin(),
                             start_positions.begin() + static_cast<std::ptrdiff_t>(kept));
  out.end_positions.assign(end_positions.begin(),
                           end_positions.begin() + static_cast<std::ptrdiff_t>(kept));
  return out;
}

QaFeatures squad_features(const Tokenizer& tokenizer, const SquadDataset& dataset,
                          const QaFeatureOptions& options) {
  EncodeOptions encode;
  encode.truncation = Truncation::only_second;
  encode.max_length = options.max_seq_length;
  encode.stride = options.doc_stride;
  const std::optional<int32_t> cls_id = tokenizer.token_to_id(tokenizer.config().special.cls);
  QaFeatures features;
  features.source = dataset.source;
  for (size_t i = 0; i < dataset.size(); ++i) {
    const SquadExample& example = dataset.examples[i];
    Encoding encoding;
    try {
      encoding = tokenizer.encode_pair(lstrip(example.question, example.where), example.context,
                                       encode);
    } catch (const Error& error) {
      fail(example.where, error.what());
    }
    std::vector<Encoding> windows = std::move(encoding.overflowing);
    encoding.overflowing.clear();
    windows.insert(windows.begin(), std::move(encoding));
    for (Encoding& window : windows) {
      int32_t start = 0, end = 0;
      answer_positions(example, window, cls_id.value_or(-1), start, end);
      features.encodings.push_back(std::move(window));
      features.example_of.push_back(i);
      features.start_positions.push_back(start);
      features.end_positions.push_back(end);
    }
  }
  return features;
}

QaBatch collate_qa_batch(const QaFeatures& features, std::span<const size_t> indices,
                         const CollateOptions& options) {
  QaBatch batch;
  batch.inputs = collate_inputs(features.encodings, indices, options, [&](size_t i) {
    return features.source + " feature " + std::to_string(i);
  });
  Shape rows = {static_cast<int64_t>(options.batch_size)};
  batch.start_positions = Tensor(options.index_dtype, rows);
  batch.end_positions = Tensor(options.index_dtype, rows);
  const auto length = static_cast<int64_t>(batch.inputs.length);
  if (options.index_dtype == DType::i32) {
    fill_positions<int32_t>(batch.start_positions, features.start_positions, indices, length);
    fill_positions<int32_t>(batch.end_positions, features.end_positions, indices, length);
  } else {
    fill_positions<int64_t>(batch.start_positions, features.start_positions, indices, length);
    fill_positions<int64_t>(batch.end_positions, features.end_positions, indices, length);
  }
  return batch;
}

}  // namespace kiln
