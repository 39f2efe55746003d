// The dropout keys of a batch's rows: one Philox offset per example of the global batch, fed as
// the "dropout_offset" input (random_bits keys each leading row by its own key), so that the same
// seed draws the same masks for any number of replicas.
#pragma once

#include <cstdint>

#include "kiln/ir/tensor.h"

namespace kiln {

// i64 [rows]: micro_step * global_batch_size + first_row + j * row_stride for j < rows, the keys
// of rows first_row, first_row + row_stride, ... of micro-step `micro_step`'s global batch (a
// replica's rows when the batch is dealt out to `row_stride` replicas in turn).
Tensor dropout_row_keys(int64_t micro_step, int64_t global_batch_size, int64_t first_row,
                        int64_t rows, int64_t row_stride = 1);

}  // namespace kiln
