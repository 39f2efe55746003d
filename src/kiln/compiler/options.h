// The switches of the compiler pipeline: every optimisation pass can be turned off by name for
// debugging, and the precision policy. Part of every compiled-program cache key.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

struct CompileOptions {
  bool dead_code = true;              // "dce": drop nodes no output depends on
  bool common_subexpressions = true;  // "cse": one node per distinct (op, operands, attrs)
  bool constant_folding = true;       // "fold": evaluate nodes whose operands are all constants
  bool simplification = true;         // "simplify": algebraic identities (x*1, x+0, double casts...)
  bool fusion = true;                 // "fusion": group nodes into kernels
  bool in_place = true;               // "inplace": honour donated inputs (results written over them)
  // Run every composite through its decomposition, even where the backend has a kernel for it.
  bool decompose_composites = false;
  // bf16 mixed precision (--bf16): dot_general operands in bf16 with f32 results; parameters,
  // optimizer state and the statistics of softmax, layer norm and the loss stay f32.
  bool bf16 = false;
  // --gradient_checkpointing ("checkpoint", checkpoint.cpp): the backward pass recomputes each
  // layer from the layer's input instead of keeping the layer's activations.
  bool gradient_checkpointing = false;

  // Turns off the passes in a comma-separated list of the names above ("cse,fusion"); throws an
  // Error naming an unknown one, with `where` (the flag it came from) as its "[where]".
  void disable(std::string_view names, std::string_view where = "compiler");
  // The same options keep only what changes results (the precision policy), with every
  // optimisation off: what the reference backend, the oracle, runs.
  CompileOptions semantics_only() const;
  // A stable text of every switch, for cache keys and logs ("dce,cse,fold,simplify,fusion,inplace").
  std::string key() const;
};

}  // namespace kiln
