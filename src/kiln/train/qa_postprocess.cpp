// postprocess_qa_predictions, step for step: per question, the best null score over its features,
// the n-best start/end pairs of each feature, sorted by score, softmax probabilities, and for
// v2.0 the comparison of the null score with the best non-empty span.
#include "kiln/train/qa_postprocess.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "kiln/io/tokenizer_unicode.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

struct Scored {
  size_t start_char = 0, end_char = 0;  // (0, 0): the null answer
  float score = 0.0f;
  float start_logit = 0.0f, end_logit = 0.0f;
  bool null = false;
};

// np.argsort(logits)[-1 : -n - 1 : -1] over the feature's tokens: the n largest, largest first
// (ties: the later index first, as a reversed ascending sort gives them).
std::vector<size_t> top_indices(const std::vector<float>& logits, size_t tokens, size_t n) {
  std::vector<size_t> order(tokens);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a > b);
  });
  order.resize(std::min(n, order.size()));
  return order;
}

}  // namespace

QaPredictionSet postprocess_qa_predictions(const SquadDataset& dataset, const QaFeatures& features,
                                           const std::vector<std::vector<float>>& start_logits,
                                           const std::vector<std::vector<float>>& end_logits,
                                           const QaPostprocessOptions& options) {
  check(start_logits.size() == features.size() && end_logits.size() == features.size(),
        "postprocess", start_logits.size(), " start and ", end_logits.size(),
        " end logit rows for ", features.size(), " features");
  std::vector<std::vector<size_t>> features_of(dataset.size());
  for (size_t f = 0; f < features.size(); ++f) features_of.at(features.example_of[f]).push_back(f);

  QaPredictionSet out;
  for (size_t e = 0; e < dataset.size(); ++e) {
    const SquadExample& example = dataset.examples[e];
    std::optional<Scored> min_null;
    std::vector<Scored> prelim;
    for (size_t f : features_of[e]) {
      const Encoding& encoding = features.encodings[f];
      const std::vector<float>& starts = start_logits[f];
      const std::vector<float>& ends = end_logits[f];
      const size_t tokens = encoding.size();
      check(starts.size() >= tokens && ends.size() >= tokens, "postprocess", "feature ", f,
            " has ", tokens, " tokens but ", starts.size(), " logits");
      const float null_score = starts[0] + ends[0];
      if (!min_null || min_null->score > null_score) {
        min_null = Scored{0, 0, null_score, starts[0], ends[0], true};
      }
      auto in_context = [&](size_t i) { return encoding.sequence_ids[i] == 1; };
      for (size_t s : top_indices(starts, tokens, options.n_best_size)) {
        for (size_t t : top_indices(ends, tokens, options.n_best_size)) {
          if (!in_context(s) || !in_context(t)) continue;
          if (t < s || t - s + 1 > options.max_answer_length) continue;
          prelim.push_back(Scored{encoding.offsets[s].start, encoding.offsets[t].end,
                                  starts[s] + ends[t], starts[s], ends[t], false});
        }
      }
    }
    float null_score = 0.0f;
    if (options.version_2_with_negative && min_null) {
      prelim.push_back(*min_null);
      null_score = min_null->score;
    }
    // sorted(..., reverse=True) is stable: equal scores keep their order.
    std::stable_sort(prelim.begin(), prelim.end(),
                     [](const Scored& a, const Scored& b) { return a.score > b.score; });
    if (prelim.size() > options.n_best_size) prelim.resize(options.n_best_size);
    if (options.version_2_with_negative && min_null &&
        std::none_of(prelim.begin(), prelim.end(), [](const Scored& p) {
          return p.start_char == 0 && p.end_char == 0;
        })) {
      prelim.push_back(*min_null);
    }

    std::u32string context = utf8_decode(example.context, example.where);
    std::vector<QaCandidate> candidates;
    std::vector<float> scores;
    for (const Scored& p : prelim) {
      size_t end = std::min(p.end_char, context.size());
      size_t start = std::min(p.start_char, end);
      candidates.push_back({utf8_encode(std::u32string_view(context).substr(start, end - start)),
                            p.start_logit, p.end_logit, 0.0});
      scores.push_back(p.score);
    }
    if (candidates.empty() || (candidates.size() == 1 && candidates[0].text.empty())) {
      candidates.insert(candidates.begin(), {"empty", 0.0f, 0.0f, 0.0});
      scores.insert(scores.begin(), 0.0f);
    }
    // np.exp(scores - max) / sum, in float32 as numpy computes on float32 scores.
    const float top = *std::max_element(scores.begin(), scores.end());
    float sum = 0.0f;
    std::vector<float> exps;
    for (float score : scores) sum += exps.emplace_back(std::exp(score - top));
    for (size_t i = 0; i < candidates.size(); ++i) candidates[i].probability = exps[i] / sum;

    if (!options.version_2_with_negative) {
      out.predictions.emplace_back(example.id, candidates[0].text);
    } else {
      auto best = std::find_if(candidates.begin(), candidates.end(),
                               [](const QaCandidate& c) { return !c.text.empty(); });
      check(best != candidates.end(), example.where, "no non-empty answer among the candidates");
      const float diff = null_score - best->start_logit - best->end_logit;
      out.null_odds.emplace_back(example.id, static_cast<double>(diff));
      out.predictions.emplace_back(
          example.id, static_cast<double>(diff) > options.null_score_diff_threshold ? ""
                                                                                    : best->text);
    }
    out.nbest.push_back(std::move(candidates));
  }
  return out;
}

}  // namespace kiln
