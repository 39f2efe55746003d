// DistilBERT as a model family (model_type "distilbert"): its config, heads and checkpoints
// behind the ModelFamily interface.
#pragma once

#include "kiln/models/model_family.h"

namespace kiln {

const ModelFamily& distilbert_family();

}  // namespace kiln
