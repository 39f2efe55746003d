// BERT as a model family (model_type "bert"): its config, heads and checkpoints behind the
// ModelFamily interface.
#pragma once

#include "kiln/models/model_family.h"

namespace kiln {

const ModelFamily& bert_family();

}  // namespace kiln
