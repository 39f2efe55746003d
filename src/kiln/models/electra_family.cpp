// ELECTRA's heads (electra.h, electra_heads.h), config and checkpoints (electra_pretrained.h) as
// a ModelFamily.
#include "kiln/models/electra_family.h"

#include "kiln/models/electra.h"
#include "kiln/models/electra_heads.h"
#include "kiln/models/electra_pretrained.h"
#include "kiln/models/encoder_family.h"

namespace kiln {

const ModelFamily& electra_family() {
  static const EncoderFamily family(EncoderParts<ElectraConfig, BertClassifier,
                                               BertQuestionAnswering, BertTokenClassification,
                                               BertMaskedLM>{
      .model_type = "electra",
      .class_prefix = "Electra",
      .parse_config = electra_config_parse,
      .sequence_classification = electra_for_sequence_classification,
      .question_answering = electra_for_question_answering,
      .token_classification = electra_for_token_classification,
      .masked_lm = electra_for_masked_lm,
      .load_weights = electra_load_weights,
      .save_pretrained = electra_save_pretrained,
      .takes_token_type_ids = true,
      .max_positions = max_position_embeddings<ElectraConfig>,
  });
  return family;
}

}  // namespace kiln
