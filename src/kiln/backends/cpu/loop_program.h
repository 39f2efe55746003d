// Internal: fused loop kernels as programs over blocks of elements. A loop group runs block by
// block (kBlock consecutive elements of its flat index space); each instruction computes one
// node over the whole block, from registers (a block of values in the node's compute type: float
// for f32/bf16/f16, double for f64, int64 for integers and bool) into a register, so that each
// instruction is a short loop the compiler vectorises and the block stays in the L1 cache.
// Operands from memory are loaded (converted, broadcasts read in place by index; operands stored
// in their compute type are read where they lie), results stored, and trailing reductions fold
// rows as they pass.
#pragma once

#include <array>
#include <cstdint>

#include "kiln/backends/cpu/kernel.h"

namespace kiln::cpu {

// Measured with the next block prefetched (loop_ops.cpp), BERT-tiny's loop kernels per training
// step: 64 elements 26.4 ms, 128 19.8, 256 17.9, 512 20.5, 1024 23.2 (256 also fastest for mini
// and base): shorter blocks pay the per-instruction overhead more often, longer ones spill L1.
inline constexpr int64_t kBlock = 256;
// A register: a block of 8-byte values, and room for the Philox words of a block that does not
// start on a multiple of 4.
inline constexpr int64_t kRegisterBytes = kBlock * 8 + 64;
inline constexpr size_t kMaxViewDims = 8;
// Registers from kAliasBase on are aliases: a contiguous operand stored in its compute type (f32,
// f64, i64) is read where it lies, its load pointing the alias at the block's elements instead of
// copying them. Aliases are only ever read: no result is written to one. KILN_CPU_PROFILE, copies
// -> aliases, alternated: BERT-tiny fp32's loop kernels 10.0/10.4 -> 9.0/8.8 ms a step (the word
// embeddings' AdamW 4.6/4.7 -> 4.0/3.9), mini fp32's 29.2/30.4 -> 26.7/27.3, base --bf16's
// 206/203 -> 196/193.
inline constexpr int32_t kAliasBase = 1 << 20;

// Where element i of the index space is in a buffer read in place: dims merged at compile time.
struct LoadView {
  int64_t rank = 0;
  std::array<int64_t, kMaxViewDims> sizes{}, strides{};  // strides in elements; 0 broadcasts
  bool contiguous = true;  // element i is at i
};

// One thread's view of the block being computed.
struct BlockContext {
  const Buffers* buffers;
  std::byte* registers;  // this thread's registers, kRegisterBytes each
  int64_t* state;        // this unit's reduction accumulators (8 bytes each) and flags
  int64_t begin;         // index of the block's first element
  int64_t count;         // elements in the block
  int64_t width;         // elements per reduced row (groups with reductions)
  // A whole-tensor reduction split across units: this unit folds [range_begin, its range's end)
  // of the one row into its accumulators and stores nothing; the kernel then combines the units'
  // partial results in unit order (Instr::combine).
  bool partial_row = false;
  int64_t range_begin = 0;
  std::byte** aliases = nullptr;  // this thread's aliases (registers from kAliasBase on)

  template <typename C>
  C* reg(int32_t r) const {
    if (r >= kAliasBase) return reinterpret_cast<C*>(aliases[r - kAliasBase]);
    return reinterpret_cast<C*>(registers + static_cast<int64_t>(r) * kRegisterBytes);
  }
};

// The state slot that flags an integer division by zero (checked after the run), and the one
// that says a unit folded part of a split row (its accumulators hold a partial result).
inline constexpr int32_t kErrorSlot = 0, kFoldedSlot = 1;

// A floating binary node one operand of which is a scalar read from buffer Instr::node instead of
// a register (`a`: the first operand; `b`: the second).
enum class ScalarOperand : uint8_t { none, a, b };
// What an instruction is to the machine-code path (loop_code.h): `none` where only its typed
// function computes it. Values are f32; loads and stores of bf16 buffers widen and round, and
// round_bf16 is a cast to bf16 read again in the kernel (its register: the value rounded to bf16),
// store_rounded_bf16 an f32 store of values rounded to bf16 (store_rounded_instr).
enum class CodeOp : uint8_t {
  none, load, store, load_bf16, store_bf16, round_bf16, store_rounded_bf16,
  add, sub, mul, div, sqrt, neg, select
};

struct Instr;
using InstrFn = void (*)(const Instr& instr, const BlockContext& block);
// The state of each unit of a kernel's loop (parallel_for_units) in its scratch: unit u's at
// scratch + u * stride.
struct UnitStates {
  std::byte* scratch;
  int64_t stride;
  int64_t units;

  int64_t* of(int64_t u) const { return reinterpret_cast<int64_t*>(scratch + u * stride); }
};
// Folds the units' partial results of a reduction (a split row's from the units with
// kFoldedSlot set, or every unit's column sums) in unit order, and stores them.
using CombineFn = void (*)(const Instr& instr, const Buffers& buffers, const UnitStates& states);

struct Instr {
  InstrFn run = nullptr;
  int32_t out = -1, a = -1, b = -1, c = -1;  // registers (c: select's third, random bits' words)
  int32_t node = -1;  // the buffer loaded, stored, reduced into, or a binary op's scalar operand
  int32_t seed = -1, offset = -1;            // random bits: their i64 key buffers
  int64_t row = 0;  // random bits keyed per leading row: elements per row (0: one scalar offset)
  int32_t slot = -1;                         // reductions: their accumulator in the state
  int64_t columns = 0;                       // column sums: their accumulators, from `slot` on
  CombineFn combine = nullptr;               // reductions: folds the units' partial results
  uint32_t stream = 0, threshold = 0;        // random bits
  double scale = 0.0;                        // dropout
  int64_t size = 0, inner = 1;               // iota: element i holds i / inner % size
  LoadView view;                             // loads
  int32_t alias = -1;                        // loads read in place: the alias they point
  CodeOp code = CodeOp::none;
  ScalarOperand scalar = ScalarOperand::none;  // binary ops: the operand read from `node`
};

// Typed instructions (loop_ops.cpp), chosen once at compile time. Each throws an Error naming the
// op for what it cannot compute.
InstrFn load_instr(DType dtype);
InstrFn store_instr(DType dtype);
// Stores f32 values rounded to `through` (bf16 or f16) and widened back: a cast pair's store.
InstrFn store_rounded_instr(DType through);
// Elementwise nodes: unary, binary, compare, select, cast, gelu, gelu_grad, dropout,
// random_bits.
InstrFn compute_instr(const Graph& graph, const Node& node);
// A floating binary node with a scalar operand (ScalarOperand); null for ops it does not cover.
InstrFn binary_scalar_instr(const Node& node, ScalarOperand scalar);
// A select whose predicate is a broadcast bool scalar read from buffer Instr::node; its operands
// are `b` and `c`, as select's.
InstrFn select_scalar_instr(DType dtype);
// reduce_sum / reduce_max over trailing axes into the node's buffer, and the combine step of the
// same reduction over a row split across units.
InstrFn reduce_instr(const Node& node);
CombineFn reduce_combine(const Node& node);
// reduce_sum over leading axes: each unit adds element i into its accumulator of column
// i % columns, and the combine step adds the units' columns in unit order into the buffer.
InstrFn column_sum_instr(const Node& node);
CombineFn column_sum_combine(const Node& node);

}  // namespace kiln::cpu
