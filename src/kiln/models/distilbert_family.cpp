// DistilBERT's heads (distilbert.h, distilbert_heads.h), config and checkpoints
// (distilbert_pretrained.h) as a ModelFamily. Its inputs have no token_type_ids.
#include "kiln/models/distilbert_family.h"

#include "kiln/models/distilbert_heads.h"
#include "kiln/models/distilbert_pretrained.h"
#include "kiln/models/encoder_family.h"

namespace kiln {

const ModelFamily& distilbert_family() {
  static const EncoderFamily family(EncoderParts<DistilBertConfig, DistilBertClassifier,
                                               DistilBertQuestionAnswering,
                                               DistilBertTokenClassifier, DistilBertMaskedLM>{
      .model_type = "distilbert",
      .class_prefix = "DistilBert",
      .parse_config = distilbert_config_parse,
      .sequence_classification = distilbert_for_sequence_classification,
      .question_answering = distilbert_for_question_answering,
      .token_classification = distilbert_for_token_classification,
      .masked_lm = distilbert_for_masked_lm,
      .load_weights = distilbert_load_weights,
      .save_pretrained = distilbert_save_pretrained,
      .takes_token_type_ids = false,
      .max_positions = max_position_embeddings<DistilBertConfig>,
      .wordpiece_tokenizer_class = "DistilBertTokenizer",
  });
  return family;
}

}  // namespace kiln
