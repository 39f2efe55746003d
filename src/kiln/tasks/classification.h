// Text classification as run_glue.py / run_classification.py: CSV, TSV or JSON lines with a text
// column (and a pair), single labels, label lists or regression targets; predict_results.txt and
// .jsonl.
#pragma once

#include "kiln/tasks/task.h"

namespace kiln {

const Task& classification_task();

}  // namespace kiln
