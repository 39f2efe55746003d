// ELECTRA as a model family (model_type "electra"): its config, heads (masked LM is the
// generator, ElectraForMaskedLM) and checkpoints behind the ModelFamily interface.
#pragma once

#include "kiln/models/model_family.h"

namespace kiln {

const ModelFamily& electra_family();

}  // namespace kiln
