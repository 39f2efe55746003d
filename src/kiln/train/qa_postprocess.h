// run_qa.py's postprocess_qa_predictions (utils_qa.py): from the start and end logits of every
// feature to one answer text per question, the n-best lists and, for SQuAD v2.0, the null odds.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kiln/io/squad_dataset.h"
#include "kiln/io/squad_features.h"
#include "kiln/train/squad_metrics.h"

namespace kiln {

struct QaPostprocessOptions {
  bool version_2_with_negative = false;
  size_t n_best_size = 20;
  size_t max_answer_length = 30;  // in tokens
  // v2.0: predict no answer when the null score exceeds the best span's by more than this.
  double null_score_diff_threshold = 0.0;
};

struct QaCandidate {
  std::string text;
  float start_logit = 0.0f;
  float end_logit = 0.0f;
  double probability = 0.0;  // softmax of the scores over the n-best list
};

struct QaPredictionSet {
  SquadPredictions predictions;         // question id -> answer, in dataset order
  SquadNoAnswerProbs null_odds;         // v2.0: id -> null score minus the best span's score
  std::vector<std::vector<QaCandidate>> nbest;  // per question, best first
};

// `start_logits[f]` and `end_logits[f]` are feature f's logits over (at least) its tokens.
// Candidates are spans of context tokens, start <= end, at most max_answer_length tokens, among
// the n_best_size highest start and end logits of the feature's own tokens (run_qa.py ranks the
// logits of a batch padded to its longest feature; positions past a feature are never answers).
// A question whose features offer no span gets "empty", as utils_qa.py does.
QaPredictionSet postprocess_qa_predictions(const SquadDataset& dataset, const QaFeatures& features,
                                           const std::vector<std::vector<float>>& start_logits,
                                           const std::vector<std::vector<float>>& end_logits,
                                           const QaPostprocessOptions& options);

}  // namespace kiln
