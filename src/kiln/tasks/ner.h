// Token classification as run_ner.py: JSON lines of word and tag lists, each word's label on its
// first token (--label_all_tokens: on all of them), seqeval's precision, recall, F1 and accuracy
// (--return_entity_level_metrics: per entity type too); predictions.txt.
#pragma once

#include "kiln/tasks/task.h"

namespace kiln {

const Task& ner_task();

}  // namespace kiln
