// Internal: loop programs compiled to machine code. A program whose instructions are all f32
// arithmetic the vector units do in one instruction each (loads and stores of contiguous f32
// buffers, add, sub, mul, div, sqrt, neg, with scalar operands, and selects on a scalar
// predicate), or bf16 loads, stores and casts to bf16, runs as one loop over the elements with
// its values in vector registers, instead of one pass per instruction over a block in memory: the
// optimizers' updates above all, and --bf16's rounding of the products' operands.
// KILN_CPU_PROFILE, BERT-tiny --bf16, alternated: the word embeddings' AdamW 3.7/3.4 -> 2.2/2.3 ms
// a step, the step 19.8/19.0 -> 17.7/18.0 ms. Each op rounds as the interpreter's does (IEEE single
// precision, no contraction), so results are the same bit for bit. Other programs keep the
// interpreter (loop_kernel.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/backends/cpu/loop_program.h"

namespace kiln::cpu {

// The buffers a compiled program reads and writes: `pointers` in the order
// LoopCode::buffers() names them, each already advanced to the thread's first element;
// `scalars` (the scalar operands' and predicates' buffers) in the order LoopCode::scalars().
struct LoopCodeArguments {
  const void* const* pointers;
  const void* const* scalars;
  int64_t count;
};

// At most this many buffers' pointers and scalars (a compiled program's limits).
inline constexpr int kMaxCodeBuffers = 10, kMaxCodeScalars = 32;

class LoopCode {
 public:
  virtual ~LoopCode() = default;
  // Runs the program over `count` elements.
  virtual void run(const LoopCodeArguments& arguments) const = 0;
  // The buffer (node id) of each pointer, and of each scalar.
  virtual const std::vector<int32_t>& buffers() const = 0;
  virtual const std::vector<int32_t>& scalars() const = 0;
};

// The program as machine code for the instruction set the loop kernels use (AVX-512 or AVX2), or
// null where it has an instruction without machine code (Instr::code), needs more vector
// registers than the set has, or the kernels run without AVX2.
std::unique_ptr<const LoopCode> compile_loop_code(const std::vector<Instr>& program,
                                                  int32_t registers, int32_t aliases);

}  // namespace kiln::cpu
