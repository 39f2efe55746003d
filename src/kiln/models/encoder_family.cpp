// The class names and the missing head of the encoder families (encoder_family.h).
#include "kiln/models/encoder_family.h"

namespace kiln {

void encoder_missing_head(std::string_view model_type) {
  fail(model_type, "Kiln builds ", model_type, " with sequence classification, question "
       "answering, token classification and masked LM heads only");
}

std::string encoder_architecture(std::string_view model_type, std::string_view class_prefix,
                                 ModelHead head) {
  const std::string prefix(class_prefix);
  switch (head) {
    case ModelHead::sequence_classification:
      return prefix + "ForSequenceClassification";
    case ModelHead::question_answering:
      return prefix + "ForQuestionAnswering";
    case ModelHead::token_classification:
      return prefix + "ForTokenClassification";
    case ModelHead::masked_lm:
      return prefix + "ForMaskedLM";
    case ModelHead::causal_lm:
      break;
  }
  encoder_missing_head(model_type);
}

}  // namespace kiln
