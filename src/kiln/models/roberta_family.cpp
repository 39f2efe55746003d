// RoBERTa's heads (roberta.h, roberta_heads.h), config and checkpoints (roberta_pretrained.h) as
// a ModelFamily, once for each model_type. The graphs take token_type_ids: RoBERTa's tokenizers
// give every token type 0, as the zeros transformers uses when none are passed.
#include "kiln/models/roberta_family.h"

#include "kiln/models/encoder_family.h"
#include "kiln/models/roberta.h"
#include "kiln/models/roberta_heads.h"
#include "kiln/models/roberta_pretrained.h"

namespace kiln {
namespace {

// Position ids count from pad_token_id + 1 (roberta_config_check): a sequence's last position
// is pad_token_id + its length, below max_position_embeddings (512 of roberta-base's 514).
int64_t roberta_max_positions(const RobertaConfig& config) {
  return config.max_position_embeddings - *config.pad_token_id - 1;
}

EncoderParts<RobertaConfig, BertClassifier, BertQuestionAnswering, BertTokenClassification,
             BertMaskedLM>
roberta_parts(std::string_view model_type, std::string_view class_prefix) {
  return {
      .model_type = model_type,
      .class_prefix = class_prefix,
      .parse_config = roberta_config_parse,
      .sequence_classification = roberta_for_sequence_classification,
      .question_answering = roberta_for_question_answering,
      .token_classification = roberta_for_token_classification,
      .masked_lm = roberta_for_masked_lm,
      .load_weights = roberta_load_weights,
      .save_pretrained = roberta_save_pretrained,
      .takes_token_type_ids = true,
      .max_positions = roberta_max_positions,
  };
}

}  // namespace

const ModelFamily& roberta_family() {
  static const EncoderFamily family(roberta_parts("roberta", "Roberta"));
  return family;
}

const ModelFamily& xlm_roberta_family() {
  static const EncoderFamily family(roberta_parts("xlm-roberta", "XLMRoberta"));
  return family;
}

}  // namespace kiln
