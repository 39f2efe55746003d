// Masked language modeling as run_mlm.py: text files in blocks (or --line_by_line),
// DataCollatorForLanguageModeling's masks; eval loss and perplexity.
#pragma once

#include "kiln/tasks/task.h"

namespace kiln {

const Task& mlm_task();

}  // namespace kiln
