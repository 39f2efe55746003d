// Extractive question answering as run_qa.py: SQuAD v1.1/v2.0 files into features by --doc_stride,
// answers post-processed as utils_qa.py, the SQuAD metrics; predictions.json,
// nbest_predictions.json, null_odds.json.
#pragma once

#include "kiln/tasks/task.h"

namespace kiln {

const Task& qa_task();

}  // namespace kiln
