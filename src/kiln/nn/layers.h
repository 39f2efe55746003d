// Modules that build graph pieces with Hugging Face parameter names and init rules: Linear,
// Conv1D, Embedding and LayerNorm (each registers its parameters under `prefix`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/nn/parameter_set.h"

namespace kiln {

// torch.nn.Linear: weight [out, in] (normal(init_std), decayed), bias [out] (zeros, not decayed).
struct Linear {
  Value weight;
  Value bias;  // invalid when the layer has none

  static Linear create(ParameterSet& params, const std::string& prefix, int64_t in, int64_t out,
                       double init_std, bool with_bias = true);
  // x [..., in] -> x W^T + b [..., out]; W^T is a contraction over W's dim 1, never materialised.
  Value operator()(Value x) const;
};

// transformers' Conv1D (GPT-2's projections): a Linear whose weight is stored [in, out], the
// transpose of torch.nn.Linear's; weight normal(init_std), decayed; bias [out] zeros, not decayed.
struct Conv1D {
  Value weight;
  Value bias;

  static Conv1D create(ParameterSet& params, const std::string& prefix, int64_t in, int64_t out,
                       double init_std);
  // x [..., in] -> x W + b [..., out].
  Value operator()(Value x) const;
};

// torch.nn.Embedding: weight [count, dim], normal(init_std) with the padding_idx row zero.
// torch also zeroes the padding row's gradient; a plain gather cannot (the IR has no
// stop-gradient). In BERT the two agree while padding ids sit only at positions whose outputs
// the loss never sees (classification, masked LM); the question-answering loss does see the
// logits of padding positions, so there the padding row gets a gradient that torch drops.
struct Embedding {
  Value weight;

  static Embedding create(ParameterSet& params, const std::string& prefix, int64_t count,
                          int64_t dim, double init_std,
                          std::optional<int64_t> padding_idx = std::nullopt);
  // ids (i32/i64) [...] -> [..., dim].
  Value operator()(Value ids) const;
};

// torch.nn.LayerNorm over the last axis: weight ones, bias zeros, neither decayed.
struct LayerNorm {
  Value weight;
  Value bias;
  double eps = 1e-12;

  static LayerNorm create(ParameterSet& params, const std::string& prefix, int64_t dim, double eps);
  Value operator()(Value x) const;
};

}  // namespace kiln
