// Causal language modeling as run_clm.py: text files (lines with their line breaks) concatenated
// and cut into --block_size blocks whose labels are their ids; eval loss, perplexity and
// next-token accuracy.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "kiln/tasks/task.h"

namespace kiln {

const Task& clm_task();

// run_clm.py's block size: --block_size capped at the tokenizer's model_max_length (unset:
// unlimited); without it, model_max_length, or min(1024, max_positions) when that is longer than
// the model takes. Each cap is reported to `log` as run_clm.py warns; a block longer than
// max_positions is an Error naming --block_size.
int64_t clm_block_size(const std::optional<int64_t>& block_size,
                       const std::optional<size_t>& model_max_length, int64_t max_positions,
                       std::ostream& log);

}  // namespace kiln
