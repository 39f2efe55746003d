// dropout_row_keys: the key of each row of a micro-step's global batch.
#include "kiln/train/dropout_keys.h"

#include "kiln/ir/error.h"

namespace kiln {

Tensor dropout_row_keys(int64_t micro_step, int64_t global_batch_size, int64_t first_row,
                        int64_t rows, int64_t row_stride) {
  check(micro_step >= 0 && global_batch_size > 0, "dropout_row_keys", "micro-step ", micro_step,
        " and global batch size ", global_batch_size, " must be >= 0 and > 0");
  const int64_t last = first_row + (rows - 1) * row_stride;
  check(first_row >= 0 && rows >= 0 && row_stride > 0 && (rows == 0 || last < global_batch_size),
        "dropout_row_keys", rows, " rows from ", first_row, " every ", row_stride,
        " are not within the global batch of ", global_batch_size);
  Tensor keys(DType::i64, {rows});
  // Written as integers, not through set(double), so that every key is exact.
  auto* out = keys.data_as<int64_t>();
  for (int64_t j = 0; j < rows; ++j) out[j] = micro_step * global_batch_size + first_row + j * row_stride;
  return keys;
}

}  // namespace kiln
