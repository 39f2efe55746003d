#include "kiln/train/seqeval_metrics.h"

#include <set>
#include <utility>

#include "kiln/ir/error.h"

namespace kiln {
namespace {

// A tag split as seqeval splits it (prefix mode): its first character ('B', 'I', 'E', 'S',
// 'O', ...) and the type after the first '-' ("_" when there is none).
struct Tag {
  char kind = 'O';
  std::string type;
};

Tag split_tag(const std::string& tag) {
  if (tag.empty()) return {'O', "_"};
  const std::string rest = tag.substr(1);
  const size_t dash = rest.find('-');
  std::string type = dash == std::string::npos ? rest : rest.substr(dash + 1);
  return {tag[0], type.empty() ? "_" : type};
}

// seqeval's end_of_chunk: whether a chunk ended between the previous tag and this one.
bool ends_chunk(const Tag& previous, const Tag& tag) {
  const char p = previous.kind, t = tag.kind;
  if (p == 'E' || p == 'S') return true;
  if ((p == 'B' || p == 'I') && (t == 'B' || t == 'S' || t == 'O')) return true;
  return p != 'O' && p != '.' && previous.type != tag.type;
}

// seqeval's start_of_chunk: whether a chunk starts at this tag.
bool starts_chunk(const Tag& previous, const Tag& tag) {
  const char p = previous.kind, t = tag.kind;
  if (t == 'B' || t == 'S') return true;
  if ((p == 'E' || p == 'S' || p == 'O') && (t == 'E' || t == 'I')) return true;
  return t != 'O' && t != '.' && previous.type != tag.type;
}

double ratio(int64_t numerator, int64_t denominator) {
  return denominator > 0 ? static_cast<double>(numerator) / static_cast<double>(denominator) : 0.0;
}

// As seqeval (and sklearn) compute it: 2 p r / (p + r), 0 when both are 0.
double f1_of(double precision, double recall) {
  const double denominator = precision + recall;
  return 2.0 * precision * recall / (denominator == 0.0 ? 1.0 : denominator);
}

}  // namespace

std::vector<TaggedEntity> seqeval_entities(const std::vector<std::vector<std::string>>& sentences) {
  std::vector<std::string> tags;
  for (const auto& sentence : sentences) {
    tags.insert(tags.end(), sentence.begin(), sentence.end());
    tags.push_back("O");
  }
  tags.push_back("O");  // closes the last chunk, as seqeval's `seq + ['O']`
  std::vector<TaggedEntity> entities;
  Tag previous{'O', ""};
  int64_t begin = 0;
  for (size_t i = 0; i < tags.size(); ++i) {
    const Tag tag = split_tag(tags[i]);
    const auto position = static_cast<int64_t>(i);
    if (ends_chunk(previous, tag)) entities.push_back({previous.type, begin, position - 1});
    if (starts_chunk(previous, tag)) begin = position;
    previous = tag;
  }
  return entities;
}

SeqevalScores seqeval_scores(const std::vector<std::vector<std::string>>& references,
                             const std::vector<std::vector<std::string>>& predictions) {
  check(references.size() == predictions.size(), "seqeval", references.size(),
        " reference sentences but ", predictions.size(), " predicted");
  int64_t tags = 0, right_tags = 0;
  for (size_t s = 0; s < references.size(); ++s) {
    check(references[s].size() == predictions[s].size(), "seqeval", "sentence ", s, " has ",
          references[s].size(), " reference tags but ", predictions[s].size(), " predicted");
    for (size_t i = 0; i < references[s].size(); ++i) {
      ++tags;
      right_tags += references[s][i] == predictions[s][i];
    }
  }
  const std::vector<TaggedEntity> truth = seqeval_entities(references);
  const std::vector<TaggedEntity> found = seqeval_entities(predictions);
  const std::set<TaggedEntity> true_set(truth.begin(), truth.end());
  struct Counts {
    int64_t correct = 0, predicted = 0, actual = 0;
  };
  std::map<std::string, Counts> counts;
  for (const TaggedEntity& entity : true_set) ++counts[entity.type].actual;
  for (const TaggedEntity& entity : std::set<TaggedEntity>(found.begin(), found.end())) {
    Counts& count = counts[entity.type];
    ++count.predicted;
    count.correct += true_set.count(entity);
  }
  SeqevalScores scores;
  Counts all;
  for (const auto& [type, count] : counts) {
    EntityTypeScores& type_scores = scores.types[type];
    type_scores.precision = ratio(count.correct, count.predicted);
    type_scores.recall = ratio(count.correct, count.actual);
    type_scores.f1 = f1_of(type_scores.precision, type_scores.recall);
    type_scores.number = count.actual;
    all.correct += count.correct;
    all.predicted += count.predicted;
    all.actual += count.actual;
  }
  scores.overall_precision = ratio(all.correct, all.predicted);
  scores.overall_recall = ratio(all.correct, all.actual);
  scores.overall_f1 = f1_of(scores.overall_precision, scores.overall_recall);
  scores.overall_accuracy = ratio(right_tags, tags);
  return scores;
}

}  // namespace kiln
