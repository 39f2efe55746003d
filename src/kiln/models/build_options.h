// What a model graph is built for: one batch shape, training or evaluation, with or without
// labels. Every family's heads take these options.
#pragma once

#include <cstdint>

#include "kiln/ir/dtype.h"

namespace kiln {

struct ModelBuildOptions {
  int64_t batch_size = 1;
  int64_t seq_len = 128;           // at most max_position_embeddings
  DType index_dtype = DType::i64;  // input_ids, token_type_ids, attention_mask: i32 or i64
  DType dtype = DType::f32;        // parameters and activations
  bool training = false;           // dropout on, drawn from inputs dropout_seed/_offset
  bool with_labels = true;         // adds the labels input and the loss
  // With problem_type unset and num_labels > 1, HF picks the loss by the labels' dtype: integer
  // labels give single-label cross entropy, float labels multi-label BCE.
  bool integer_labels = true;
  // Masked LM with labels: above 0, the labels come as `masked_positions` and `masked_labels`
  // ([mlm_predictions] each: flat positions in [batch * seq] and their ids, -100 for padding)
  // and the head computes logits only there; 0: `labels` [batch, seq], logits everywhere.
  int64_t mlm_predictions = 0;
  // The Trainer's label_smoothing_factor: the losses over class labels (single-label
  // classification, masked LM) are label_smoothed_cross_entropy's, as transformers' LabelSmoother
  // computes them for models with a `labels` input; other losses refuse it.
  double label_smoothing = 0.0;
};

}  // namespace kiln
