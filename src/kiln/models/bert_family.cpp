// BERT's heads (bert.h, bert_heads.h), config (bert_config.h) and checkpoints
// (bert_pretrained.h) as a ModelFamily.
#include "kiln/models/bert_family.h"

#include "kiln/models/bert_heads.h"
#include "kiln/models/bert_pretrained.h"
#include "kiln/models/encoder_family.h"

namespace kiln {

const ModelFamily& bert_family() {
  static const EncoderFamily family(EncoderParts<BertConfig, BertClassifier, BertQuestionAnswering,
                                               BertTokenClassification, BertMaskedLM>{
      .model_type = "bert",
      .class_prefix = "Bert",
      .parse_config = bert_config_parse,
      .sequence_classification = bert_for_sequence_classification,
      .question_answering = bert_for_question_answering,
      .token_classification = bert_for_token_classification,
      .masked_lm = bert_for_masked_lm,
      .load_weights = bert_load_weights,
      .save_pretrained = bert_save_pretrained,
      .takes_token_type_ids = true,
      .max_positions = max_position_embeddings<BertConfig>,
  });
  return family;
}

}  // namespace kiln
