// The official SQuAD evaluation scripts (evaluate-v1.1.py and evaluate-v2.0.py), computed in the
// same order with the same floating-point operations, so that every digit they print agrees
// (Python 3.11 and earlier: later versions sum floats with compensation).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/io/squad_dataset.h"

namespace kiln {

// One question as the scripts read it from the dataset: its id and the texts of its gold
// answers (none: unanswerable), in dataset order.
struct SquadReference {
  std::string id;
  std::vector<std::string> answers;
};

// The questions of a dataset with their answers' texts, as the scripts (and HF's squad and
// squad_v2 metrics) read them.
std::vector<SquadReference> squad_references(const SquadDataset& dataset);

// Question id -> predicted text, in the order of the predictions file (v2.0's threshold search
// breaks ties between equal no-answer probabilities by this order).
using SquadPredictions = std::vector<std::pair<std::string, std::string>>;
// Question id -> no-answer probability (v2.0's na_prob_file), in file order.
using SquadNoAnswerProbs = std::vector<std::pair<std::string, double>>;

// normalize_answer: lower case, ASCII punctuation removed, the articles a/an/the removed as
// the regex \b(a|an|the)\b does, whitespace collapsed to single spaces.
std::string squad_normalize_answer(std::string_view text);

// evaluate-v1.1.py: {"exact_match", "f1"} in percent, the maximum over the gold answers of each
// question; a question without a prediction scores 0 and its id is added to `unanswered`.
// A question without gold answers is an Error naming it (the script fails on it).
nlohmann::ordered_json squad_v1_evaluate(const std::vector<SquadReference>& references,
                                         const SquadPredictions& predictions,
                                         std::vector<std::string>* unanswered = nullptr);

// evaluate-v2.0.py: exact, f1, total, HasAns_exact/_f1/_total and NoAns_* (when the dataset has
// such questions) after the no-answer threshold, and with `na_probs` (the script's
// --na-prob-file) best_exact, best_exact_thresh, best_f1, best_f1_thresh; keys in the order the
// script prints them. Without na_probs every prediction's probability is 0.0. A question without
// a prediction is an Error naming it (the script fails on it too).
nlohmann::ordered_json squad_v2_evaluate(const std::vector<SquadReference>& references,
                                         const SquadPredictions& predictions,
                                         const SquadNoAnswerProbs* na_probs = nullptr,
                                         double na_prob_thresh = 1.0);

}  // namespace kiln
