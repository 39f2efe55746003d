// dropout_row_keys: the key of each row of a micro-step's global batch.
#include "kiln/train/dropout_keys.h"

#include "kiln/ir/error.h"

namespace kiln {

Tensor dropout_row_keys(int64_t micro_step, int64_t global_batch_size, int64_t first_row,
                        int64_t rows) {
  check(micro_step >= 0 && global_batch_size > 0, "dropout_row_keys", "micro-step ", micro_step,
        " and global batch size ", global_batch_size, " must be >= 0 and > 0");
  check(first_row >= 0 && rows >= 0 && first_row + rows <= global_batch_size, "dropout_row_keys",
        "rows [", first_row, ", ", first_row + rows, ") are not within the global batch of ",
        global_batch_size);
  Tensor keys(DType::i64, {rows});
  // Written as integers, not through set(double), so that every key is exact.
  auto* out = keys.data_as<int64_t>();
  for (int64_t j = 0; j < rows; ++j) out[j] = micro_step * global_batch_size + first_row + j;
  return keys;
}

}  // namespace kiln
