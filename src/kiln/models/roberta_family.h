// RoBERTa and XLM-RoBERTa as model families (model_type "roberta" and "xlm-roberta", one graph
// with transformers' class names of each): their config, heads and checkpoints behind the
// ModelFamily interface.
#pragma once

#include "kiln/models/model_family.h"

namespace kiln {

const ModelFamily& roberta_family();
const ModelFamily& xlm_roberta_family();

}  // namespace kiln
