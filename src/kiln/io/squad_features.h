// Question-answering features as run_qa.py prepares them: each question (left-stripped) paired
// with its context, truncated only in the context to max_seq_length with windows overlapping by
// doc_stride tokens, every window a feature with its character offsets and, for training, the
// token span of the first answer ([CLS] when the answer is not inside the window or there is
// none); and their batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/io/collate.h"
#include "kiln/io/squad_dataset.h"
#include "kiln/io/tokenizer.h"

namespace kiln {

struct QaFeatureOptions {
  size_t max_seq_length = 384;
  size_t doc_stride = 128;  // tokens shared by consecutive windows of one context
};

struct QaFeatures {
  std::string source;
  // One per window, without overflowing; offsets are characters of the context where
  // sequence_ids is 1 (the context), meaningless elsewhere.
  std::vector<Encoding> encodings;
  std::vector<size_t> example_of;        // feature -> index of its question in the dataset
  std::vector<int32_t> start_positions;  // token index of the answer's first token, or [CLS]
  std::vector<int32_t> end_positions;    // token index of its last token, or [CLS]

  size_t size() const { return encodings.size(); }
  // The first `count` features (all when 0 or more), as run_qa.py's --max_*_samples cut them.
  QaFeatures head(size_t count) const;
};

// Errors name the question ("[file question 'id'] ...") when its encoding fails, e.g. a question
// that leaves no room for the context.
QaFeatures squad_features(const Tokenizer& tokenizer, const SquadDataset& dataset,
                          const QaFeatureOptions& options);

// A batch of features: inputs as collate_batch pads them and, in `labels`, "start_positions" and
// "end_positions" ([batch_size] of the index dtype). Padding rows get the bucket length as
// positions, which BertForQuestionAnswering's loss ignores (its ignore_index is the length).
struct QaBatch {
  Batch inputs;
  Tensor start_positions;
  Tensor end_positions;
};
QaBatch collate_qa_batch(const QaFeatures& features, std::span<const size_t> indices,
                         const CollateOptions& options);

}  // namespace kiln
