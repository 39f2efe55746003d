// SQuAD v1.1 / v2.0 exact match and F1, line for line as the official evaluation scripts.
#include "kiln/train/squad_metrics.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "kiln/io/python_text.h"
#include "kiln/io/tokenizer_unicode.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

constexpr std::string_view kWhere = "squad evaluation";

bool is_ascii_punctuation(char32_t c) {  // Python's string.punctuation
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
         (c >= 123 && c <= 126);
}

// re.sub(r'\b(a|an|the)\b', ' ', text): matches scanned left to right, never overlapping, with
// \b judged on the text before any replacement.
std::u32string remove_articles(const std::u32string& text) {
  auto word = [&](size_t i) { return i < text.size() && python_is_word_char(text[i]); };
  auto boundary = [&](size_t i) { return (i > 0 && word(i - 1)) != word(i); };
  std::u32string out;
  for (size_t i = 0; i < text.size();) {
    size_t matched = 0;
    if (boundary(i)) {
      for (std::u32string_view article : {U"a", U"an", U"the"}) {
        if (text.compare(i, article.size(), article) == 0 && boundary(i + article.size())) {
          matched = article.size();
          break;
        }
      }
    }
    if (matched > 0) {
      out.push_back(U' ');
      i += matched;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

// str.split() without arguments.
std::vector<std::u32string> split_whitespace(const std::u32string& text) {
  std::vector<std::u32string> tokens;
  std::u32string current;
  for (char32_t c : text) {
    if (python_is_space(c)) {
      if (!current.empty()) tokens.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

std::vector<std::u32string> normalized_tokens(std::string_view text) {
  std::u32string lowered = python_lower(text, kWhere);
  std::u32string kept;
  for (char32_t c : lowered) {
    if (!is_ascii_punctuation(c)) kept.push_back(c);
  }
  return split_whitespace(remove_articles(kept));
}

// sum((Counter(a) & Counter(b)).values()).
size_t common_tokens(const std::vector<std::u32string>& a, const std::vector<std::u32string>& b) {
  std::map<std::u32string, size_t> counts;
  for (const auto& token : a) ++counts[token];
  size_t same = 0;
  for (const auto& token : b) {
    auto found = counts.find(token);
    if (found != counts.end() && found->second > 0) {
      --found->second;
      ++same;
    }
  }
  return same;
}

double f1_of(size_t same, size_t predicted, size_t gold) {
  double precision = 1.0 * static_cast<double>(same) / static_cast<double>(predicted);
  double recall = 1.0 * static_cast<double>(same) / static_cast<double>(gold);
  return (2 * precision * recall) / (precision + recall);
}

// evaluate-v1.1.py's f1_score: 0 when nothing is shared (including empty answers).
double f1_v1(std::string_view prediction, std::string_view gold) {
  std::vector<std::u32string> predicted = normalized_tokens(prediction);
  std::vector<std::u32string> truth = normalized_tokens(gold);
  size_t same = common_tokens(predicted, truth);
  return same == 0 ? 0.0 : f1_of(same, predicted.size(), truth.size());
}

// evaluate-v2.0.py's compute_f1: an empty answer on either side scores 1 only when both are.
double f1_v2(std::string_view gold, std::string_view prediction) {
  std::vector<std::u32string> truth = normalized_tokens(gold);
  std::vector<std::u32string> predicted = normalized_tokens(prediction);
  if (truth.empty() || predicted.empty()) return truth == predicted ? 1.0 : 0.0;
  size_t same = common_tokens(truth, predicted);
  return same == 0 ? 0.0 : f1_of(same, predicted.size(), truth.size());
}

double exact(std::string_view a, std::string_view b) {
  return squad_normalize_answer(a) == squad_normalize_answer(b) ? 1.0 : 0.0;
}

template <typename Value>
std::unordered_map<std::string, Value> by_id(const std::vector<std::pair<std::string, Value>>& pairs) {
  std::unordered_map<std::string, Value> out;
  for (const auto& [id, value] : pairs) out[id] = value;  // json.load: the last duplicate wins
  return out;
}

void check_unique(const std::vector<SquadReference>& references) {
  std::unordered_map<std::string_view, size_t> seen;
  for (const SquadReference& reference : references) {
    check(seen.emplace(reference.id, 0).second, kWhere, "question id '", reference.id,
          "' appears twice in the dataset");
  }
}

// make_eval_dict over `ids` (indices into the score vectors): the sums in that order.
void add_eval(nlohmann::ordered_json& out, const std::string& prefix,
              const std::vector<double>& exact_scores, const std::vector<double>& f1_scores,
              const std::vector<size_t>& ids) {
  double exact_sum = 0.0, f1_sum = 0.0;
  for (size_t i : ids) {
    exact_sum += exact_scores[i];
    f1_sum += f1_scores[i];
  }
  const auto total = static_cast<double>(ids.size());
  out[prefix + "exact"] = 100.0 * exact_sum / total;
  out[prefix + "f1"] = 100.0 * f1_sum / total;
  out[prefix + "total"] = ids.size();
}

// find_best_thresh: questions in increasing order of no-answer probability (stable), each moved
// to "answered"; the best running score and the probability where it was reached.
std::pair<double, double> best_threshold(const std::vector<SquadReference>& references,
                                         const std::vector<std::string>& predicted,
                                         const std::vector<double>& scores,
                                         const SquadNoAnswerProbs& na_probs) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < references.size(); ++i) index.emplace(references[i].id, i);
  double score = 0.0;
  for (const SquadReference& reference : references) score += reference.answers.empty();
  double best = score, threshold = 0.0;
  // sorted(na_probs, key=na_probs.get) over the dict: one entry per id, first position kept.
  std::unordered_map<std::string, double> probability = by_id(na_probs);
  std::vector<std::pair<std::string, double>> ordered;
  for (const auto& [id, unused] : na_probs) {
    if (probability.contains(id)) {
      ordered.emplace_back(id, probability[id]);
      probability.erase(id);
    }
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  for (const auto& [id, value] : ordered) {
    auto found = index.find(id);
    if (found == index.end()) continue;
    size_t i = found->second;
    double diff = !references[i].answers.empty() ? scores[i] : (predicted[i].empty() ? 0.0 : -1.0);
    score += diff;
    if (score > best) {
      best = score;
      threshold = value;
    }
  }
  return {100.0 * best / static_cast<double>(references.size()), threshold};
}

}  // namespace

std::vector<SquadReference> squad_references(const SquadDataset& dataset) {
  std::vector<SquadReference> out;
  for (const SquadExample& example : dataset.examples) {
    SquadReference reference{example.id, {}};
    for (const SquadAnswer& answer : example.answers) reference.answers.push_back(answer.text);
    out.push_back(std::move(reference));
  }
  return out;
}

std::string squad_normalize_answer(std::string_view text) {
  std::u32string joined;
  for (const std::u32string& token : normalized_tokens(text)) {
    if (!joined.empty()) joined.push_back(U' ');
    joined += token;
  }
  return utf8_encode(joined);
}

nlohmann::ordered_json squad_v1_evaluate(const std::vector<SquadReference>& references,
                                         const SquadPredictions& predictions,
                                         std::vector<std::string>* unanswered) {
  check(!references.empty(), kWhere, "the dataset has no questions");
  std::unordered_map<std::string, std::string> predicted = by_id(predictions);
  double exact_sum = 0.0, f1_sum = 0.0;
  for (const SquadReference& reference : references) {
    check(!reference.answers.empty(), kWhere, "question '", reference.id,
          "' has no gold answer (SQuAD v1.1 needs one; use the v2.0 evaluation)");
    auto found = predicted.find(reference.id);
    if (found == predicted.end()) {
      if (unanswered) unanswered->push_back(reference.id);
      continue;
    }
    double best_exact = 0.0, best_f1 = 0.0;
    for (size_t i = 0; i < reference.answers.size(); ++i) {
      double e = exact(found->second, reference.answers[i]);
      double f = f1_v1(found->second, reference.answers[i]);
      best_exact = i == 0 ? e : std::max(best_exact, e);
      best_f1 = i == 0 ? f : std::max(best_f1, f);
    }
    exact_sum += best_exact;
    f1_sum += best_f1;
  }
  const auto total = static_cast<double>(references.size());
  nlohmann::ordered_json out;
  out["exact_match"] = 100.0 * exact_sum / total;
  out["f1"] = 100.0 * f1_sum / total;
  return out;
}

nlohmann::ordered_json squad_v2_evaluate(const std::vector<SquadReference>& references,
                                         const SquadPredictions& predictions,
                                         const SquadNoAnswerProbs* na_probs,
                                         double na_prob_thresh) {
  check(!references.empty(), kWhere, "the dataset has no questions");
  check_unique(references);
  std::unordered_map<std::string, std::string> predicted = by_id(predictions);
  SquadNoAnswerProbs zeros;
  if (!na_probs) {
    for (const auto& [id, text] : predictions) zeros.emplace_back(id, 0.0);
  }
  std::unordered_map<std::string, double> probability = by_id(na_probs ? *na_probs : zeros);

  std::vector<double> exact_raw, f1_raw, exact_thresh, f1_thresh;
  std::vector<std::string> texts;
  std::vector<size_t> all, has_answer, no_answer;
  for (size_t i = 0; i < references.size(); ++i) {
    const SquadReference& reference = references[i];
    auto found = predicted.find(reference.id);
    check(found != predicted.end(), kWhere, "no prediction for question '", reference.id, "'");
    std::vector<std::string> gold;
    for (const std::string& answer : reference.answers) {
      if (!squad_normalize_answer(answer).empty()) gold.push_back(answer);
    }
    if (gold.empty()) gold = {""};
    double best_exact = 0.0, best_f1 = 0.0;
    for (size_t g = 0; g < gold.size(); ++g) {
      double e = exact(gold[g], found->second), f = f1_v2(gold[g], found->second);
      best_exact = g == 0 ? e : std::max(best_exact, e);
      best_f1 = g == 0 ? f : std::max(best_f1, f);
    }
    exact_raw.push_back(best_exact);
    f1_raw.push_back(best_f1);
    texts.push_back(found->second);
    // apply_no_ans_threshold
    auto na = probability.find(reference.id);
    check(na != probability.end(), kWhere, "no no-answer probability for question '",
          reference.id, "'");
    const bool has = !reference.answers.empty();
    const bool predicts_no_answer = na->second > na_prob_thresh;
    exact_thresh.push_back(predicts_no_answer ? (has ? 0.0 : 1.0) : best_exact);
    f1_thresh.push_back(predicts_no_answer ? (has ? 0.0 : 1.0) : best_f1);
    all.push_back(i);
    (has ? has_answer : no_answer).push_back(i);
  }
  nlohmann::ordered_json out;
  add_eval(out, "", exact_thresh, f1_thresh, all);
  if (!has_answer.empty()) add_eval(out, "HasAns_", exact_thresh, f1_thresh, has_answer);
  if (!no_answer.empty()) add_eval(out, "NoAns_", exact_thresh, f1_thresh, no_answer);
  if (na_probs) {
    auto [best_exact, exact_threshold] = best_threshold(references, texts, exact_raw, *na_probs);
    auto [best_f1, f1_threshold] = best_threshold(references, texts, f1_raw, *na_probs);
    out["best_exact"] = best_exact;
    out["best_exact_thresh"] = exact_threshold;
    out["best_f1"] = best_f1;
    out["best_f1_thresh"] = f1_threshold;
  }
  return out;
}

}  // namespace kiln
