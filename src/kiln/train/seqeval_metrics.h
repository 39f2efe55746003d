// The entity-level metrics of token classification as run_ner.py reports them: evaluate's
// "seqeval" metric with its defaults (seqeval 1.2.2, default mode: chunks as conlleval finds
// them, so "I-PER" after "O" starts an entity; IOB1, IOB2 and IOBES tags all read).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {

// An entity of the sentences laid end to end with an "O" between each two: its type ("PER")
// and its first and last tag positions there.
struct TaggedEntity {
  std::string type;
  int64_t first = 0;
  int64_t last = 0;
  auto operator<=>(const TaggedEntity&) const = default;
};

// seqeval's get_entities over `sentences` (each a list of tags such as "B-PER", "I-LOC", "O").
std::vector<TaggedEntity> seqeval_entities(const std::vector<std::vector<std::string>>& sentences);

struct EntityTypeScores {
  double precision = 0.0;  // 0 when nothing of the type is predicted
  double recall = 0.0;     // 0 when the references hold none of the type
  double f1 = 0.0;
  int64_t number = 0;  // entities of the type in the references
};

struct SeqevalScores {
  // Every type found in the references or the predictions.
  std::map<std::string, EntityTypeScores> types;
  // Micro averages over the entities of every type, and the tag accuracy.
  double overall_precision = 0.0;
  double overall_recall = 0.0;
  double overall_f1 = 0.0;
  double overall_accuracy = 0.0;
};

// Throws an Error when the two do not have the same number of sentences and tags in each.
SeqevalScores seqeval_scores(const std::vector<std::vector<std::string>>& references,
                             const std::vector<std::vector<std::string>>& predictions);

}  // namespace kiln
