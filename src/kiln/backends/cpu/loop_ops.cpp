// The typed instructions of loop programs: loads, stores, every elementwise op and trailing
// reductions, one loop per (op, dtype) over a block of registers. Semantics are the reference's:
// floating types compute in float (f64 in double) and every result is rounded to its dtype (bf16,
// f16) or wrapped (narrow integers) before the next op reads it; integers compute in wrapping
// int64; NaN propagates through max/min; integer division by zero is an Error.
#include <cmath>
#include <limits>

#include "kiln/backends/cpu/loop_program.h"
#include "kiln/backends/cpu/parallel.h"
#include "kiln/backends/cpu/typed.h"
#include "kiln/backends/cpu/vector_math.h"
#include "kiln/ir/op_registry.h"

namespace kiln::cpu {
namespace {

int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Integer power by squaring, wrapping; a negative exponent truncates 1 / a^-b toward zero.
int64_t int_pow(int64_t base, int64_t exponent) {
  if (exponent < 0) return base == 1 ? 1 : base == -1 ? (exponent % 2 == 0 ? 1 : -1) : 0;
  int64_t result = 1;
  for (; exponent > 0; exponent >>= 1) {
    if (exponent & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
  }
  return result;
}

// max/min that propagate NaN (written as selects, so that loops vectorise).
template <typename C>
C nan_max(C a, C b) {
  return a != a ? a : b != b ? b : a > b ? a : b;
}
template <typename C>
C nan_min(C a, C b) {
  return a != a ? a : b != b ? b : a < b ? a : b;
}

// A compute value as the dtype T holds it: rounded (bf16, f16), wrapped (narrow integers) or
// 0/1 (bool); f32, f64 and i64 hold every compute value.
template <typename T>
Compute<T> as_stored(Compute<T> v) {
  if constexpr (std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, int64_t>) {
    return v;
  } else {
    return load(store<T>(v));
  }
}

template <typename T>
KILN_CPU_CLONES void load_contiguous(const T* src, Compute<T>* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = load(src[i]);
}

template <typename T>
KILN_CPU_CLONES void load_strided(const T* src, int64_t stride, Compute<T>* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = load(src[i * stride]);
}

// Asks for the next block's part of a buffer while this block computes, so that the memory
// traffic overlaps the block's instructions (the hardware's stream prefetch runs too few lines
// ahead to cover a block).
template <typename T>
void prefetch_next(const T* at, int64_t count, int write) {
  const char* next = reinterpret_cast<const char*>(at + count);
  const char* end = reinterpret_cast<const char*>(at + 2 * count);
  for (; next < end; next += 64) {
    if (write) __builtin_prefetch(next, 1, 3);
    else __builtin_prefetch(next, 0, 3);
  }
}

template <typename T>
void load_run(const Instr& instr, const BlockContext& block) {
  using C = Compute<T>;
  const T* src = block.buffers->at<T>(instr.node);
  C* out = block.reg<C>(instr.out);
  const LoadView& view = instr.view;
  if (view.contiguous) {
    prefetch_next(src + block.begin, block.count, 0);
    load_contiguous(src + block.begin, out, block.count);
    return;
  }
  // The multi-index of the first element, then runs along the innermost dim.
  std::array<int64_t, kMaxViewDims> index{};
  int64_t rest = block.begin, at = 0;
  for (int64_t d = view.rank - 1; d >= 0; --d) {
    index[static_cast<size_t>(d)] = rest % view.sizes[static_cast<size_t>(d)];
    rest /= view.sizes[static_cast<size_t>(d)];
    at += index[static_cast<size_t>(d)] * view.strides[static_cast<size_t>(d)];
  }
  auto inner = static_cast<size_t>(view.rank - 1);
  int64_t size = view.sizes[inner], stride = view.strides[inner];
  for (int64_t i = 0; i < block.count;) {
    int64_t run = std::min(size - index[inner], block.count - i);
    if (stride == 0) {
      std::fill_n(out + i, run, load(src[at]));
    } else {
      load_strided(src + at, stride, out + i, run);
    }
    i += run;
    index[inner] += run;
    at += run * stride;
    if (index[inner] < size) continue;
    at -= size * stride;
    index[inner] = 0;
    for (int64_t d = view.rank - 2; d >= 0; --d) {
      auto dim = static_cast<size_t>(d);
      at += view.strides[dim];
      if (++index[dim] < view.sizes[dim]) break;
      at -= view.sizes[dim] * view.strides[dim];
      index[dim] = 0;
    }
  }
}

template <typename T>
KILN_CPU_CLONES void store_loop(const Compute<T>* in, T* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = store<T>(in[i]);
}

template <typename T>
void store_run(const Instr& instr, const BlockContext& block) {
  prefetch_next(block.buffers->at<T>(instr.node) + block.begin, block.count, 1);
  store_loop(block.reg<Compute<T>>(instr.a), block.buffers->at<T>(instr.node) + block.begin,
             block.count);
}

// ---- elementwise ops ----

template <typename T, typename R, typename F>
KILN_CPU_CLONES void unary_loop(const Compute<T>* a, R* out, int64_t count, F f) {
  for (int64_t i = 0; i < count; ++i) out[i] = f(a[i]);
}

template <typename T, typename R, typename F>
KILN_CPU_CLONES void binary_loop(const Compute<T>* a, const Compute<T>* b, R* out, int64_t count,
                                 F f) {
  for (int64_t i = 0; i < count; ++i) out[i] = f(a[i], b[i]);
}

// An instruction applying F to one or two registers of dtype T, the result rounded to T.
template <typename T, typename F>
struct Unary {
  static void run(const Instr& instr, const BlockContext& block) {
    using C = Compute<T>;
    unary_loop<T>(block.reg<C>(instr.a), block.reg<C>(instr.out), block.count,
                  [](C x) { return as_stored<T>(F{}(x)); });
  }
};
template <typename T, typename F>
struct Binary {
  using C = Compute<T>;
  static void run(const Instr& instr, const BlockContext& block) {
    binary_loop<T>(block.reg<C>(instr.a), block.reg<C>(instr.b), block.reg<C>(instr.out),
                   block.count, [](C x, C y) { return as_stored<T>(F{}(x, y)); });
  }
  // One operand is a scalar read from buffer `node` (a broadcast scalar): no register filled.
  static void run_scalar_a(const Instr& instr, const BlockContext& block) {
    C s = load(*block.buffers->at<T>(instr.node));
    unary_loop<T>(block.reg<C>(instr.b), block.reg<C>(instr.out), block.count,
                  [s](C y) { return as_stored<T>(F{}(s, y)); });
  }
  static void run_scalar_b(const Instr& instr, const BlockContext& block) {
    C s = load(*block.buffers->at<T>(instr.node));
    unary_loop<T>(block.reg<C>(instr.a), block.reg<C>(instr.out), block.count,
                  [s](C x) { return as_stored<T>(F{}(x, s)); });
  }
};

struct Neg {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::floating_point<C>) return -x;
    else return wrap_sub(0, x);
  }
};
struct Abs {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::floating_point<C>) return std::fabs(x);
    else return x < 0 ? wrap_sub(0, x) : x;
  }
};
struct Sign {  // sign(0) keeps the zero (and its sign), NaN stays NaN
  template <typename C>
  C operator()(C x) const { return x > 0 ? C(1) : x < 0 ? C(-1) : x; }
};
struct LogicalNot {
  template <typename C>
  C operator()(C x) const { return x == 0; }
};
struct Exp {
  template <typename C>
  C operator()(C x) const { return fast_exp(x); }
};
struct Log {
  template <typename C>
  C operator()(C x) const { return std::log(x); }
};
struct Tanh {
  template <typename C>
  C operator()(C x) const { return std::tanh(x); }
};
struct Logistic {
  template <typename C>
  C operator()(C x) const { return C(1) / (C(1) + fast_exp(-x)); }
};
struct Sqrt {
  template <typename C>
  C operator()(C x) const { return std::sqrt(x); }
};
struct Rsqrt {
  template <typename C>
  C operator()(C x) const { return C(1) / std::sqrt(x); }
};
struct Erf {
  template <typename C>
  C operator()(C x) const { return fast_erf(x); }
};
struct Gelu {  // x/2 (1 + erf(x / sqrt 2)), the exact GELU
  template <typename C>
  C operator()(C x) const { return x * C(0.5) * (C(1) + fast_erf(x * C(0.70710678118654752440))); }
};

struct Add {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::floating_point<C>) return a + b;
    else return wrap_add(a, b);
  }
};
struct Sub {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::floating_point<C>) return a - b;
    else return wrap_sub(a, b);
  }
};
struct Mul {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::floating_point<C>) return a * b;
    else return wrap_mul(a, b);
  }
};
struct Div {  // floating only: integers go through IntDiv
  template <typename C>
  C operator()(C a, C b) const { return a / b; }
};
struct Max {
  template <typename C>
  C operator()(C a, C b) const { return nan_max(a, b); }
};
struct Min {
  template <typename C>
  C operator()(C a, C b) const { return nan_min(a, b); }
};
struct Pow {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::floating_point<C>) return std::pow(a, b);
    else return int_pow(a, b);
  }
};
struct And {
  template <typename C>
  C operator()(C a, C b) const { return a && b; }
};
struct Or {
  template <typename C>
  C operator()(C a, C b) const { return a || b; }
};

// Integer division truncates toward zero; a zero divisor flags the error (the quotient is then
// meaningless) and the kernel throws after the run.
template <typename T>
void int_div_run(const Instr& instr, const BlockContext& block) {
  const int64_t* a = block.reg<int64_t>(instr.a);
  const int64_t* b = block.reg<int64_t>(instr.b);
  int64_t* out = block.reg<int64_t>(instr.out);
  for (int64_t i = 0; i < block.count; ++i) {
    if (b[i] == 0) block.state[kErrorSlot] = 1;
    int64_t q = b[i] == -1 ? wrap_sub(0, a[i]) : b[i] == 0 ? 0 : a[i] / b[i];  // MIN / -1 wraps
    out[i] = as_stored<T>(q);
  }
}

template <typename T, typename F>
InstrFn unary_for() {
  return &Unary<T, F>::run;
}
template <typename T, typename F>
InstrFn binary_for(ScalarOperand scalar) {
  switch (scalar) {
    case ScalarOperand::none: return &Binary<T, F>::run;
    case ScalarOperand::a: return &Binary<T, F>::run_scalar_a;
    case ScalarOperand::b: return &Binary<T, F>::run_scalar_b;
  }
  return nullptr;
}

template <typename T>
InstrFn unary_typed(OpKind op) {
  switch (op) {
    case OpKind::neg: return unary_for<T, Neg>();
    case OpKind::abs: return unary_for<T, Abs>();
    case OpKind::sign: return unary_for<T, Sign>();
    case OpKind::logical_not: return unary_for<T, LogicalNot>();
    default: break;
  }
  if constexpr (std::floating_point<Compute<T>>) {
    switch (op) {
      case OpKind::exp: return unary_for<T, Exp>();
      case OpKind::log: return unary_for<T, Log>();
      case OpKind::tanh: return unary_for<T, Tanh>();
      case OpKind::logistic: return unary_for<T, Logistic>();
      case OpKind::sqrt: return unary_for<T, Sqrt>();
      case OpKind::rsqrt: return unary_for<T, Rsqrt>();
      case OpKind::erf: return unary_for<T, Erf>();
      case OpKind::gelu: return unary_for<T, Gelu>();
      default: break;
    }
  }
  return nullptr;
}

// Scalar operands only for floating arithmetic: integers and logical ops read them from registers.
template <typename T>
InstrFn binary_typed(OpKind op, ScalarOperand scalar) {
  constexpr bool floating = std::floating_point<Compute<T>>;
  const bool registers_only = scalar == ScalarOperand::none;
  if (!floating && !registers_only) return nullptr;
  switch (op) {
    case OpKind::add: return binary_for<T, Add>(scalar);
    case OpKind::sub: return binary_for<T, Sub>(scalar);
    case OpKind::mul: return binary_for<T, Mul>(scalar);
    case OpKind::div:
      if constexpr (floating) return binary_for<T, Div>(scalar);
      else return &int_div_run<T>;
    case OpKind::max: return binary_for<T, Max>(scalar);
    case OpKind::min: return binary_for<T, Min>(scalar);
    case OpKind::pow: return binary_for<T, Pow>(scalar);
    case OpKind::logical_and: return registers_only ? binary_for<T, And>(scalar) : nullptr;
    case OpKind::logical_or: return registers_only ? binary_for<T, Or>(scalar) : nullptr;
    default: return nullptr;
  }
}

template <typename T, CompareDir dir>
void compare_run(const Instr& instr, const BlockContext& block) {
  using C = Compute<T>;
  binary_loop<T>(block.reg<C>(instr.a), block.reg<C>(instr.b), block.reg<int64_t>(instr.out),
                 block.count, [](C a, C b) -> int64_t {
    if constexpr (dir == CompareDir::eq) return a == b;
    else if constexpr (dir == CompareDir::ne) return a != b;
    else if constexpr (dir == CompareDir::lt) return a < b;
    else if constexpr (dir == CompareDir::le) return a <= b;
    else if constexpr (dir == CompareDir::gt) return a > b;
    else return a >= b;
  });
}

template <typename T>
InstrFn compare_typed(CompareDir dir) {
  switch (dir) {
    case CompareDir::eq: return &compare_run<T, CompareDir::eq>;
    case CompareDir::ne: return &compare_run<T, CompareDir::ne>;
    case CompareDir::lt: return &compare_run<T, CompareDir::lt>;
    case CompareDir::le: return &compare_run<T, CompareDir::le>;
    case CompareDir::gt: return &compare_run<T, CompareDir::gt>;
    case CompareDir::ge: return &compare_run<T, CompareDir::ge>;
  }
  return nullptr;
}

template <typename C>
KILN_CPU_CLONES void select_loop(const int64_t* pred, const C* a, const C* b, C* out,
                                 int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = pred[i] != 0 ? a[i] : b[i];
}

template <typename T>
void select_run(const Instr& instr, const BlockContext& block) {
  using C = Compute<T>;
  select_loop(block.reg<int64_t>(instr.a), block.reg<C>(instr.b), block.reg<C>(instr.c),
              block.reg<C>(instr.out), block.count);
}

template <typename From, typename To>
KILN_CPU_CLONES void cast_loop(const Compute<From>* in, Compute<To>* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = load(convert<From, To>(store<From>(in[i])));
}

template <typename From, typename To>
void cast_run(const Instr& instr, const BlockContext& block) {
  cast_loop<From, To>(block.reg<Compute<From>>(instr.a), block.reg<Compute<To>>(instr.out),
                      block.count);
}

// Keyed per leading row: each row's part of the block is drawn with the row's key, its elements
// counted from the row's start. When rows hold a multiple of 4 elements, a row's Philox blocks
// start where a block of the flat index would, so the parts' words land in place, one after the
// other (words[0] is element begin rounded down to 4). Otherwise a part's first and last blocks
// straddle its neighbours' elements: each part is drawn aside and its elements copied.
const uint32_t* row_bits(const Instr& instr, const BlockContext& block, int64_t seed,
                         const int64_t* offsets, uint32_t* words) {
  const int64_t end = block.begin + block.count, row = instr.row;
  const bool aligned = row % 4 == 0;
  uint32_t* next = words;
  for (int64_t at = block.begin; at < end;) {
    int64_t r = at / row;
    int64_t i = at - r * row, stop = std::min(end, (r + 1) * row) - r * row;
    int64_t first = i / 4, blocks = (stop + 3) / 4 - first;
    if (aligned) {
      philox_blocks(seed, offsets[r], instr.stream, first, blocks, next);
      next += 4 * blocks;
    } else {
      uint32_t part[kBlock + 8];  // a part's blocks cover at most its elements + 6 more
      philox_blocks(seed, offsets[r], instr.stream, first, blocks, part);
      std::copy_n(part + i % 4, stop - i, words + (at - block.begin));
    }
    at += stop - i;
  }
  return aligned ? words + block.begin % 4 : words;
}

// The Philox words of the block's elements: words[i] is element begin + i's.
const uint32_t* block_bits(const Instr& instr, const BlockContext& block, uint32_t* words) {
  int64_t seed = *block.buffers->at<int64_t>(instr.seed);
  const int64_t* offsets = block.buffers->at<int64_t>(instr.offset);
  if (instr.row > 0) return row_bits(instr, block, seed, offsets, words);
  int64_t first = block.begin / 4, last = (block.begin + block.count + 3) / 4;
  philox_blocks(seed, *offsets, instr.stream, first, last - first, words);
  return words + block.begin % 4;
}

// The words go to the temporary register `c` first.
void random_bits_run(const Instr& instr, const BlockContext& block) {
  int64_t* out = block.reg<int64_t>(instr.out);
  const uint32_t* bits = block_bits(instr, block, block.reg<uint32_t>(instr.c));
  for (int64_t i = 0; i < block.count; ++i) out[i] = bits[i];
}

template <typename T>
KILN_CPU_CLONES void dropout_loop(const Compute<T>* in, const uint32_t* bits, Compute<T>* out,
                                  int64_t count, uint32_t threshold, Compute<T> scale) {
  using C = Compute<T>;
  for (int64_t i = 0; i < count; ++i) {
    out[i] = as_stored<T>(bits[i] >= threshold ? in[i] * scale : C(0));
  }
}

// keep = bits >= threshold; kept values are scaled by 1 / (1 - rate). The words go to the
// temporary register `c` first.
template <typename T>
void dropout_run(const Instr& instr, const BlockContext& block) {
  using C = Compute<T>;
  C* out = block.reg<C>(instr.out);
  const uint32_t* bits = block_bits(instr, block, block.reg<uint32_t>(instr.c));
  dropout_loop<T>(block.reg<C>(instr.a), bits, out, block.count, instr.threshold,
                  static_cast<C>(instr.scale));
}

// i / inner % size for the block's elements, counted up instead of divided per element.
template <typename T>
void iota_run(const Instr& instr, const BlockContext& block) {
  using C = Compute<T>;
  C* out = block.reg<C>(instr.out);
  int64_t within = block.begin % instr.inner, value = block.begin / instr.inner % instr.size;
  for (int64_t i = 0; i < block.count; ++i) {
    out[i] = as_stored<T>(static_cast<C>(value));
    if (++within == instr.inner) {
      within = 0;
      if (++value == instr.size) value = 0;
    }
  }
}

// ---- reductions ----

template <typename A, typename C, typename Op>
KILN_CPU_CLONES A fold(const C* x, int64_t n, A init, Op op) {
  constexpr int kLanes = 16;  // independent accumulators, so that the fold vectorises
  A acc[kLanes];
  for (A& a : acc) a = init;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] = op(acc[l], static_cast<A>(x[i + l]));
  }
  for (; i < n; ++i) acc[0] = op(acc[0], static_cast<A>(x[i]));
  A result = acc[0];
  for (int l = 1; l < kLanes; ++l) result = op(result, acc[l]);
  return result;
}

template <typename C>
C fold_max(C acc, C v) {
  return v != v || v > acc ? v : acc;
}

// Each reduction's accumulator type, identity and fold. Floating sums accumulate in double:
// cheap here, and long sums stay within fp32 tolerance.
template <typename T>
struct SumRule {
  using A = std::conditional_t<std::floating_point<Compute<T>>, double, int64_t>;
  static A identity() { return A{0}; }
  static A fold(A a, A b) {
    if constexpr (std::floating_point<A>) {
      return a + b;
    } else {
      return wrap_add(a, b);
    }
  }
};

template <typename T>
struct MaxRule {
  using A = std::conditional_t<std::floating_point<Compute<T>>, Compute<T>, int64_t>;
  static A identity() {
    if constexpr (std::floating_point<A>) {
      return -std::numeric_limits<A>::infinity();
    } else {
      return static_cast<int64_t>(std::numeric_limits<T>::lowest());
    }
  }
  static A fold(A a, A b) { return fold_max<A>(a, b); }
};

// Folds the block's part of each row into the row's accumulator (kept in the thread's state
// between blocks of one row) and stores the rows the block completes; for a split row, only folds.
template <typename T, typename Rule>
void reduce_run(const Instr& instr, const BlockContext& block) {
  using A = typename Rule::A;
  auto op = [](A a, A b) { return Rule::fold(a, b); };
  const Compute<T>* x = block.reg<Compute<T>>(instr.a);
  T* out = block.buffers->at<T>(instr.node);
  A& acc = *reinterpret_cast<A*>(block.state + instr.slot);
  for (int64_t at = block.begin, end = block.begin + block.count; at < end;) {
    int64_t row = at / block.width, row_end = (row + 1) * block.width;
    int64_t stop = std::min(end, row_end);
    bool starts = block.partial_row ? at == block.range_begin : at == row * block.width;
    if (starts) acc = Rule::identity();
    acc = op(acc, fold<A>(x + (at - block.begin), stop - at, Rule::identity(), op));
    if (stop == row_end && !block.partial_row) out[row] = store<T>(acc);
    at = stop;
  }
}

template <typename T, typename Rule>
void reduce_combine_run(const Instr& instr, const Buffers& buffers, const ThreadStates& states) {
  using A = typename Rule::A;
  A acc = Rule::identity();
  for (int t = 0; t < states.threads; ++t) {
    const int64_t* state = states.of(t);
    if (state[kFoldedSlot] == 0) continue;
    acc = Rule::fold(acc, *reinterpret_cast<const A*>(state + instr.slot));
  }
  buffers.at<T>(instr.node)[0] = store<T>(acc);
}

template <typename A, typename C, typename Op>
KILN_CPU_CLONES void fold_into(const C* x, A* acc, int64_t count, Op op) {
  for (int64_t i = 0; i < count; ++i) acc[i] = op(acc[i], static_cast<A>(x[i]));
}

// Adds the block's elements into their columns' accumulators, run by run of consecutive columns.
template <typename T>
void column_sum_run(const Instr& instr, const BlockContext& block) {
  using A = typename SumRule<T>::A;
  const Compute<T>* x = block.reg<Compute<T>>(instr.a);
  A* acc = reinterpret_cast<A*>(block.state + instr.slot);
  int64_t column = block.begin % instr.columns;
  for (int64_t i = 0; i < block.count; column = 0) {  // a run ends a row of columns or the block
    int64_t run = std::min(instr.columns - column, block.count - i);
    fold_into(x + i, acc + column, run, [](A a, A b) { return SumRule<T>::fold(a, b); });
    i += run;
  }
}

template <typename T>
void column_sum_combine_run(const Instr& instr, const Buffers& buffers,
                            const ThreadStates& states) {
  using A = typename SumRule<T>::A;
  T* out = buffers.at<T>(instr.node);
  for (int64_t column = 0; column < instr.columns; ++column) {
    A acc = SumRule<T>::identity();
    for (int t = 0; t < states.threads; ++t) {
      acc = SumRule<T>::fold(acc, reinterpret_cast<const A*>(states.of(t) + instr.slot)[column]);
    }
    out[column] = store<T>(acc);
  }
}

// A reduction node's typed function: pick<T, Rule>() for its dtype and kind.
template <typename Fn, typename Pick>
Fn reduction_fn(const Node& node, const Pick& pick) {
  bool sum = node.op == OpKind::reduce_sum;
  return visit_numeric(op_name(node.op), node.dtype, [&]<typename T>() -> Fn {
    return sum ? pick.template operator()<T, SumRule<T>>()
               : pick.template operator()<T, MaxRule<T>>();
  });
}

}  // namespace

InstrFn load_instr(DType dtype) {
  return visit_any("load", dtype, [&]<typename T>() -> InstrFn { return &load_run<T>; });
}

InstrFn store_instr(DType dtype) {
  return visit_any("store", dtype, [&]<typename T>() -> InstrFn { return &store_run<T>; });
}

InstrFn binary_scalar_instr(const Node& node, ScalarOperand scalar) {
  return visit_floating(op_name(node.op), node.dtype,
                        [&]<typename T>() { return binary_typed<T>(node.op, scalar); });
}

InstrFn compute_instr(const Graph& graph, const Node& node) {
  std::string_view name = op_name(node.op);
  InstrFn fn = nullptr;
  switch (op_info(node.op).category) {
    case OpCategory::unary:
      fn = visit_any(name, node.dtype, [&]<typename T>() { return unary_typed<T>(node.op); });
      break;
    case OpCategory::binary:
      fn = visit_any(name, node.dtype,
                     [&]<typename T>() { return binary_typed<T>(node.op, ScalarOperand::none); });
      break;
    default:
      break;
  }
  switch (node.op) {
    case OpKind::gelu:
      fn = visit_floating(name, node.dtype, [&]<typename T>() { return unary_typed<T>(node.op); });
      break;
    case OpKind::compare:
      fn = visit_any(name, graph.node(node.inputs[0]).dtype, [&]<typename T>() {
        return compare_typed<T>(node.attr<CompareAttrs>().dir);
      });
      break;
    case OpKind::select:
      fn = visit_any(name, node.dtype, [&]<typename T>() -> InstrFn { return &select_run<T>; });
      break;
    case OpKind::cast:
      fn = visit_any(name, graph.node(node.inputs[0]).dtype, [&]<typename From>() {
        return visit_any(name, node.dtype,
                         [&]<typename To>() -> InstrFn { return &cast_run<From, To>; });
      });
      break;
    case OpKind::dropout:
      fn = visit_floating(name, node.dtype, [&]<typename T>() -> InstrFn {
        return &dropout_run<T>;
      });
      break;
    case OpKind::iota:
      fn = visit_numeric(name, node.dtype, [&]<typename T>() -> InstrFn { return &iota_run<T>; });
      break;
    case OpKind::random_bits:
      check(node.dtype == DType::u32, "random_bits", "produces u32, not ",
            dtype_name(node.dtype));
      fn = &random_bits_run;
      break;
    default:
      break;
  }
  check(fn != nullptr, name, "the CPU kernel does not accept ", dtype_name(node.dtype));
  return fn;
}

InstrFn reduce_instr(const Node& node) {
  return reduction_fn<InstrFn>(node, []<typename T, typename Rule>() {
    return &reduce_run<T, Rule>;
  });
}

CombineFn reduce_combine(const Node& node) {
  return reduction_fn<CombineFn>(node, []<typename T, typename Rule>() {
    return &reduce_combine_run<T, Rule>;
  });
}

InstrFn column_sum_instr(const Node& node) {
  return visit_numeric(op_name(node.op), node.dtype,
                       [&]<typename T>() -> InstrFn { return &column_sum_run<T>; });
}

CombineFn column_sum_combine(const Node& node) {
  return visit_numeric(op_name(node.op), node.dtype,
                       [&]<typename T>() -> CombineFn { return &column_sum_combine_run<T>; });
}

}  // namespace kiln::cpu
