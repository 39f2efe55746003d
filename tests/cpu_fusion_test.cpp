// Fused kernels on the CPU backend against the reference: random elementwise graphs over every
// dtype family with broadcasts of smaller operands and trailing reductions (index spaces that
// cross block and row boundaries), random bits and dropout inside loops, selects on a scalar
// predicate, errors inside loops, and donated arguments written in place (also by a TrainStep
// update).
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "cpu_test_util.h"
#include "kiln/backends/cpu/cpu_isa.h"
#include "kiln/backends/cpu/loop_code.h"
#include "kiln/ir/error.h"
#include "kiln/runtime/runtime.h"
#include "kiln/train/train_step.h"

namespace kiln {
namespace {

// A random DAG of elementwise ops over `shape`, reading inputs of the full shape and broadcasts
// of smaller ones, with a few intermediate values and trailing reductions as outputs.
std::vector<Value> random_graph(testing::Feeds& feeds, DType dtype, const Shape& shape,
                                std::mt19937_64& rng) {
  bool floating = is_floating(dtype);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<Value> values = {feeds.any(dtype, shape), feeds.any(dtype, shape)};
  auto operand = [&]() -> Value {
    if (pick(4) != 0) return values[values.size() - 1 - pick(std::min<size_t>(values.size(), 4))];
    // A broadcast of a smaller input: a row, a column or a scalar.
    Shape row(shape.size(), 1), column = shape;
    row.back() = shape.back();
    column.back() = 1;
    switch (pick(3)) {
      case 0: return broadcast_to(feeds.any(dtype, row), shape);
      case 1: return broadcast_to(feeds.any(dtype, column), shape);
      default: return broadcast_to(feeds.any(dtype, {}), shape);
    }
  };
  for (int step = 0; step < 14; ++step) {
    Value a = operand(), b = operand(), next;
    switch (pick(floating ? 9 : 7)) {
      case 0: next = a + b; break;
      case 1: next = a - b; break;
      case 2: next = a * b; break;
      case 3: next = max(a, b); break;
      case 4: next = min(neg(a), b); break;
      case 5: next = select(lt(a, b), a, abs(b)); break;
      case 6: next = cast(cast(a, floating ? DType::f64 : DType::i64), dtype) + b; break;
      case 7: next = tanh(a) * exp(tanh(b)); break;
      default: next = gelu(a) - logistic(b) / (abs(b) + 1.0); break;
    }
    // Keep integer and floating magnitudes bounded.
    values.push_back(floating ? tanh(next) * 3.0 : max(min(next, b), neg(abs(a))));
  }
  Axes last = {static_cast<int64_t>(shape.size()) - 1};
  Axes last_two = {static_cast<int64_t>(shape.size()) - 2, static_cast<int64_t>(shape.size()) - 1};
  return {values.back(), values[values.size() / 2], reduce_sum(values.back(), last),
          reduce_max(values[values.size() - 2], last_two), reduce_sum(values.back())};
}

TEST(CpuFusion, RandomGraphsMatchReference) {
  std::mt19937_64 rng(3);
  for (DType dtype : {DType::f32, DType::bf16, DType::f64, DType::f16, DType::i32, DType::i64}) {
    // 555 elements cross a block boundary; rows of 300 hold more than one block's worth.
    for (const Shape& shape : {Shape{3, 5, 37}, Shape{2, 2, 300}, Shape{1, 7}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + shape_str(shape));
      Graph graph;
      testing::Feeds feeds(graph, rng());
      std::vector<Value> outputs = random_graph(feeds, dtype, shape, rng);
      auto executable = make_cpu_backend()->compile(graph, outputs);
      EXPECT_LT(executable->stats().kernels, 8);  // fused: far fewer kernels than nodes
      std::vector<Tensor> expected = evaluate_reference(graph, outputs, feeds.arguments());
      // Float rounding (the reference computes in double) grows through 14 chained ops; sums of
      // hundreds of terms rounded to bf16/f16 differ by their length times an ulp.
      testing::expect_outputs_close(executable->run(feeds.arguments()), expected,
                                    dtype == DType::bf16 || dtype == DType::f16 ? 4.0 : 10.0);
    }
  }
}

// Dropout and a mask from random bits fused with other ops give the reference's bits, also in
// blocks that start inside a Philox block of 4 (1031 elements per row).
TEST(CpuFusion, RandomBitsInsideLoopsMatchReference) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {3, 1031});
  Value seed = feeds.scalar(DType::i64, 77), offset = feeds.scalar(DType::i64, 5);
  Value bits = random_bits(seed, offset, {3, 1031}, 2);
  Value masked = select(ge(bits, full(graph, 3e9, DType::u32, {3, 1031})), x, zeros_like(x));
  Value dropped = dropout(x * 2.0, seed, offset, 0.25, 1);
  std::vector<Value> outputs = {reduce_sum(masked + dropped, {1}), cast(bits, DType::i64)};
  auto executable = make_cpu_backend()->compile(graph, outputs);
  EXPECT_EQ(executable->stats().kernels, 1);
  testing::expect_matches_reference(graph, outputs, feeds.arguments());
}

// The same with one key per leading row, rows of 1031 and 1032 elements (blocks crossing rows,
// drawn aside or in place), and keys computed in the graph: spread from a scalar by a broadcast
// and counted by a loop over as many elements as the bits (rows of one element). Loop kernels
// read keys from buffers, so neither is read in place nor joins the bits' group.
TEST(CpuFusion, RowKeyedRandomBitsInsideLoopsMatchReference) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value seed = feeds.scalar(DType::i64, 77), base = feeds.scalar(DType::i64, 1 << 20);
  Value keys = feeds.integers(DType::i64, {3}, -1000, 1000);
  std::vector<Value> outputs;
  for (int64_t length : {1031, 1032}) {
    Value x = feeds.any(DType::f32, {3, length});
    Value bits = random_bits(seed, keys, {3, length}, 2);
    Value masked = select(ge(bits, full(graph, 3e9, DType::u32, {3, length})), x, zeros_like(x));
    Value dropped = dropout(x * 2.0, seed, keys, 0.25, 1);
    outputs.push_back(reduce_sum(masked + dropped, {1}));
    outputs.push_back(cast(bits, DType::i64));
  }
  Value spread = broadcast_in_dim(base, {4}, {});
  Value counted = iota(graph, DType::i64, {6}, 0) + broadcast_in_dim(base, {6}, {});
  outputs.push_back(random_bits(seed, spread, {4, 6}, 3));
  outputs.push_back(random_bits(seed, counted, {6}, 4));
  outputs.push_back(dropout(feeds.any(DType::f32, {6}), seed, counted, 0.5, 5));
  testing::expect_matches_reference(graph, outputs, feeds.arguments());
}

// Runs `outputs` on the CPU backend against the reference and returns the executable. Sums of
// thousands of rounded terms: bf16/f16 results differ by the length times an ulp.
std::unique_ptr<Executable> expect_long_sums_match_reference(const Graph& graph,
                                                             const std::vector<Value>& outputs,
                                                             const std::vector<Tensor>& arguments,
                                                             DType dtype) {
  auto executable = make_cpu_backend()->compile(graph, outputs);
  double scale = dtype == DType::bf16 || dtype == DType::f16 ? 8.0 : 10.0;
  testing::expect_outputs_close(executable->run(arguments),
                                evaluate_reference(graph, outputs, arguments), scale);
  return executable;
}

// Whole-tensor sums and maxima long enough to be split across the threads (each folds a part of
// the one row; the parts are combined in thread order), fused with elementwise work, for every
// dtype family; a NaN in the last thread's part reaches the maximum. With one thread (as under
// OMP_NUM_THREADS=1) the same graphs run unsplit.
TEST(CpuFusion, WholeTensorReductionsSplitAcrossThreadsMatchReference) {
  std::mt19937_64 rng(5);
  const Shape shape = {5, 13, 1031};  // 67,015 elements: a few thread ranges, ragged blocks
  for (DType dtype : {DType::f32, DType::bf16, DType::f64, DType::f16, DType::i32, DType::i64}) {
    SCOPED_TRACE(dtype_name(dtype));
    bool floating = is_floating(dtype);
    Graph graph;
    testing::Feeds feeds(graph, rng());
    Value x = feeds.any(dtype, shape), y = feeds.any(dtype, shape);
    Value product = floating ? tanh(x) * y : x * y;
    std::vector<Value> outputs = {reduce_sum(product), reduce_max(x - y), reduce_sum(x * x)};
    std::vector<Tensor> arguments = feeds.arguments();
    auto executable = expect_long_sums_match_reference(graph, outputs, arguments, dtype);
    EXPECT_LE(executable->stats().kernels, 2);
    if (floating) {
      arguments[0].set(shape_numel(shape) - 1, std::nan(""));
      std::vector<Tensor> actual = executable->run(arguments);
      EXPECT_TRUE(std::isnan(actual[1].get(0)));
      EXPECT_TRUE(std::isnan(actual[2].get(0)));
    }
  }
}

// Sums over leading axes fused with the elementwise work that produces their operand: each thread
// adds its range into its own column accumulators, combined in thread order. Columns of 1031
// (blocks wrap around them mid-block) and of 96, over a few thread ranges, for every dtype
// family, with the elementwise result stored by the same kernel.
TEST(CpuFusion, ColumnSumsMatchReference) {
  std::mt19937_64 rng(11);
  for (DType dtype : {DType::f32, DType::bf16, DType::f64, DType::f16, DType::i32, DType::i64}) {
    SCOPED_TRACE(dtype_name(dtype));
    for (const Shape& shape : {Shape{5, 13, 1031}, Shape{700, 96}}) {
      SCOPED_TRACE(shape_str(shape));
      Graph graph;
      testing::Feeds feeds(graph, rng());
      Value x = feeds.any(dtype, shape), y = feeds.any(dtype, shape);
      Value product = is_floating(dtype) ? tanh(x) * y : x * y;
      Axes leading(shape.size() - 1);
      std::iota(leading.begin(), leading.end(), 0);
      std::vector<Value> outputs = {product, reduce_sum(product, leading)};
      auto executable = expect_long_sums_match_reference(graph, outputs, feeds.arguments(), dtype);
      EXPECT_EQ(executable->stats().kernels, 1);
    }
  }
}

// The executable's outputs are the reference's bit for bit.
void expect_reference_bits(Executable& executable, const Graph& graph,
                           const std::vector<Value>& outputs,
                           const std::vector<Tensor>& arguments) {
  std::vector<Tensor> expected = evaluate_reference(graph, outputs, arguments);
  std::vector<Tensor> got = executable.run(arguments);
  for (size_t i = 0; i < outputs.size(); ++i) {
    ASSERT_EQ(got[i].nbytes(), expected[i].nbytes());
    EXPECT_EQ(std::memcmp(got[i].data(), expected[i].data(), got[i].nbytes()), 0)
        << "output " << i << ": " << testing::compare_tensors(got[i], expected[i], 0.0, 0.0);
  }
}

// Random f32 values in [-3, 3) whose first ones (as many as fit) are what rounding to bf16 must
// get right: ties (to even, up and down), NaNs (the last one's payload all in the bits rounding
// drops), infinities, the largest f32 (to infinity), subnormals (vcvtneps2bf16 would flush them),
// -0 and f16's largest.
Tensor rounding_edges(std::mt19937_64& rng, const Shape& shape) {
  const double edges[] = {1.0 + 0x1p-8, 1.0 + 0x1p-9, 1.0 + 3 * 0x1p-9, -(1.0 - 0x1p-10),
                          std::nan(""), HUGE_VAL,     -HUGE_VAL,        0x1.fffffep127,
                          1e-40,        -0x1.0181p-127, -0.0,           65520.0};
  Tensor values = testing::random_tensor(rng, DType::f32, shape, -3.0, 3.0);
  int64_t count = std::min<int64_t>(values.numel(), std::size(edges));
  for (int64_t i = 0; i < count; ++i) values.set(i, edges[i]);
  if (values.numel() > count) {
    const uint32_t low_payload_nan = 0x7F800001u;
    std::memcpy(values.data() + count * 4, &low_payload_nan, 4);
  }
  return values;
}

// A cast from bf16 or f16 to f32 inside a loop takes no instruction (loop_kernel.cpp): the
// operand's register already holds the result (--bf16's rounding pairs). The result stored, read
// again and reduced, over rows past a block's 256 elements, as the reference computes them.
TEST(CpuFusion, WideningCastsReuseTheirOperandsRegister) {
  for (DType half : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(half));
    Graph graph;
    testing::Feeds feeds(graph);
    Value x = tanh(feeds.any(DType::f32, {3, 300}));
    Value rounded = cast(cast(x, half), DType::f32);
    std::vector<Value> outputs = {rounded, rounded * 2.0 + x, reduce_sum(rounded, {1})};
    auto executable = make_cpu_backend()->compile(graph, outputs);
    EXPECT_EQ(executable->stats().kernels, 1);
    testing::expect_matches_reference(graph, outputs, feeds.arguments());
  }
}

// A cast to bf16 or f16 that is only stored takes no instruction: the store rounds the operand's
// register. Bit for bit the reference's, on values that round up, down and to even, on NaN and
// infinities; a cast that the same kernel also reads keeps its rounded register.
TEST(CpuFusion, CastsOnlyStoredAreRoundedByTheStore) {
  std::mt19937_64 rng(5);
  Tensor values = testing::random_tensor(rng, DType::f32, {3, 300}, -3.0, 3.0);
  const double edges[] = {1.0 + 0x1p-8, 1.0 + 0x1p-9, 1.0 + 3 * 0x1p-9, 1.0 - 0x1p-10,
                          65520.0,      std::nan(""), HUGE_VAL,          -HUGE_VAL};
  for (size_t i = 0; i < std::size(edges); ++i) values.set(static_cast<int64_t>(i), edges[i]);
  for (DType half : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(half));
    Graph graph;
    testing::Feeds feeds(graph);
    Value x = feeds.tensor(values), y = feeds.any(DType::f32, {3, 300});
    Value read_again = cast(x * y, half);
    std::vector<Value> outputs = {cast(x, half), cast(cast(x + y, half), half == DType::bf16
                                                                           ? DType::f16
                                                                           : DType::bf16),
                                  read_again, cast(read_again, DType::f32) * 3.0};
    auto executable = make_cpu_backend()->compile(graph, outputs);
    EXPECT_EQ(executable->stats().kernels, 1);
    expect_reference_bits(*executable, graph, outputs, feeds.arguments());
  }
}

// A cast to bf16 or f16 and back to f32 whose rounded value only the store reads takes no pass:
// the store rounds (--bf16's pairs after gelu, dropout and the gradients' sums). Bit for bit the
// reference's on rounding_edges, in an interpreted kernel (with abs) and a compiled one; a pair
// also read in the kernel keeps its rounded register for that reader.
TEST(CpuFusion, CastPairsOnlyStoredRoundInTheStore) {
  std::mt19937_64 rng(17);
  Tensor values = rounding_edges(rng, {3, 300});
  for (DType half : {DType::bf16, DType::f16}) {
    for (bool interpreted : {true, false}) {
      SCOPED_TRACE(std::string(dtype_name(half)) + (interpreted ? " interpreted" : " compiled"));
      Graph graph;
      testing::Feeds feeds(graph);
      Value x = feeds.tensor(values), y = feeds.any(DType::f32, {3, 300});
      Value z = interpreted ? abs(y) : y * 2.0;
      auto pair = [&](Value v) { return cast(cast(v, half), DType::f32); };
      Value read_again = pair(z * y);
      std::vector<Value> outputs = {pair(x), pair(z), read_again, read_again * 3.0 + z};
      auto executable = make_cpu_backend()->compile(graph, outputs);
      EXPECT_EQ(executable->stats().kernels, 1);
      const bool compiles = cpu::loop_kernel_isa() >= cpu::CpuIsa::avx2;
      EXPECT_EQ(executable->stats().compiled_loops,
                !interpreted && half == DType::bf16 && compiles ? 1 : 0);
      expect_reference_bits(*executable, graph, outputs, feeds.arguments());
    }
  }
}

// Contiguous f32, f64 and i64 operands are read where they lie (registers that alias the
// buffers): a program long enough to reuse its freed registers for results (each input is dead
// after its first uses) matches the reference, and leaves the argument bytes as they were.
TEST(CpuFusion, OperandsReadInPlaceAreNeverWritten) {
  for (DType dtype : {DType::f32, DType::f64, DType::i64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Graph graph;
    testing::Feeds feeds(graph);
    Value acc = feeds.any(dtype, {3, 300});
    for (int i = 0; i < 6; ++i) acc = acc * feeds.any(dtype, {3, 300}) + acc;
    std::vector<Value> outputs = {acc, reduce_sum(acc, {1})};
    auto executable = make_cpu_backend()->compile(graph, outputs);
    EXPECT_EQ(executable->stats().kernels, 1);
    std::vector<Tensor> arguments;
    for (const Tensor& argument : feeds.arguments()) arguments.push_back(argument.clone());
    std::vector<Tensor> expected = evaluate_reference(graph, outputs, feeds.arguments());
    testing::expect_outputs_close(executable->run(arguments), expected);
    for (size_t i = 0; i < arguments.size(); ++i) {
      EXPECT_EQ(std::memcmp(arguments[i].data(), feeds.arguments()[i].data(),
                            arguments[i].nbytes()), 0) << "argument " << i;
    }
  }
}

// A select on a broadcast bool scalar (a training step's skip of a non-finite update) reads the
// scalar and copies the operand it picks; both picks, over floating, half and integer dtypes.
TEST(CpuFusion, SelectsOnAScalarPredicateMatchReference) {
  for (DType dtype : {DType::f32, DType::bf16, DType::f64, DType::i32}) {
    for (bool predicate : {true, false}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + (predicate ? " true" : " false"));
      Graph graph;
      testing::Feeds feeds(graph);
      Value pick = broadcast_to(feeds.scalar(DType::boolean, predicate ? 1.0 : 0.0), {3, 300});
      Value x = feeds.any(dtype, {3, 300}), y = feeds.any(dtype, {3, 300});
      Value picked = select(pick, x * y + x, y);
      std::vector<Value> outputs = {picked, select(pick, y, picked) - x};
      auto executable = make_cpu_backend()->compile(graph, outputs);
      EXPECT_EQ(executable->stats().kernels, 1);
      testing::expect_matches_reference(graph, outputs, feeds.arguments());
    }
  }
}

// Loops of f32 arithmetic run as machine code (loop_code.h) with AVX2 or AVX-512: random programs
// of every op it covers, scalar operands on either side and selects on a scalar predicate, over
// sizes around whole vectors (the code's vector loop and its loop over the elements left) and
// across threads, are the reference's bit for bit (each op rounds once, in both). Values stay
// away from NaN, whose payloads the two may carry differently.
TEST(CpuFusion, CompiledLoopsAreTheReferenceBitForBit) {
  const bool compiles = cpu::loop_kernel_isa() >= cpu::CpuIsa::avx2;
  std::mt19937_64 rng(11);
  for (int64_t size : {1, 7, 8, 15, 16, 17, 33, 300, 40003}) {
    for (bool predicate : {true, false}) {
      SCOPED_TRACE("size " + std::to_string(size) + (predicate ? " true" : " false"));
      Graph graph;
      testing::Feeds feeds(graph, rng());
      const Shape shape{size};
      Value one = broadcast_to(feeds.scalar(DType::f32, 1.0), shape);
      Value scale = broadcast_to(feeds.scalar(DType::f32, 0.75), shape);
      Value pick = broadcast_to(feeds.scalar(DType::boolean, predicate ? 1.0 : 0.0), shape);
      std::vector<Value> values = {feeds.any(DType::f32, shape, 0.5, 2.0),
                                   feeds.any(DType::f32, shape, 0.5, 2.0),
                                   feeds.any(DType::f32, shape, -2.0, 2.0)};
      for (int step = 0; step < 16; ++step) {
        auto recent = [&]() { return values[values.size() - 1 - rng() % 3]; };
        Value a = recent(), b = recent(), next;
        switch (rng() % 9) {
          case 0: next = a + b; break;
          case 1: next = a - b * scale; break;
          case 2: next = scale - a * b; break;
          case 3: next = a / (b * b + one); break;
          case 4: next = one / (a * a + scale); break;
          case 5: next = sqrt(a * a + one); break;
          case 6: next = neg(a) * scale + b; break;
          case 7: next = select(pick, a, b) / scale; break;
          default: next = (a + b) * (a - b); break;
        }
        values.push_back(next / (next * next + one));  // within [-1/2, 1/2]
      }
      std::vector<Value> outputs = {values.back(), values[values.size() / 2]};
      auto executable = make_cpu_backend()->compile(graph, outputs);
      EXPECT_EQ(executable->stats().kernels, 1);
      EXPECT_EQ(executable->stats().compiled_loops, compiles ? 1 : 0);
      expect_reference_bits(*executable, graph, outputs, feeds.arguments());
    }
  }
}

// bf16 in machine code: loads widen, stores and casts read again round to nearest even, over
// sizes around whole vectors and across threads, bit for bit the reference's on rounding_edges.
TEST(CpuFusion, CompiledLoopsRoundToBf16AsTheReference) {
  const bool compiles = cpu::loop_kernel_isa() >= cpu::CpuIsa::avx2;
  std::mt19937_64 rng(13);
  for (int64_t size : {1, 7, 8, 15, 16, 17, 33, 300, 40003}) {
    SCOPED_TRACE("size " + std::to_string(size));
    Tensor values = rounding_edges(rng, {size});
    Graph graph;
    testing::Feeds feeds(graph, rng());
    Value x = feeds.tensor(values), y = feeds.any(DType::f32, {size});
    Value z = feeds.any(DType::f32, {size}), h = feeds.any(DType::bf16, {size});
    Value rounded = cast(x, DType::bf16);
    Value product = cast(cast(y * z, DType::bf16), DType::f32);
    std::vector<Value> outputs = {rounded, cast(rounded, DType::f32),
                                  product + cast(h, DType::f32),
                                  cast(cast(h, DType::f32) * y, DType::bf16)};
    auto executable = make_cpu_backend()->compile(graph, outputs);
    EXPECT_EQ(executable->stats().kernels, 1);
    EXPECT_EQ(executable->stats().compiled_loops, compiles ? 1 : 0);
    expect_reference_bits(*executable, graph, outputs, feeds.arguments());
  }
}

// A loop with an op the machine code does not cover (exp) is interpreted, as is one reading more
// buffers than the code keeps pointers to; both match the reference.
TEST(CpuFusion, LoopsOutsideTheCompiledOpsAreInterpreted) {
  for (bool many_buffers : {false, true}) {
    SCOPED_TRACE(many_buffers ? "many buffers" : "exp");
    Graph graph;
    testing::Feeds feeds(graph);
    Value x = feeds.any(DType::f32, {300});
    Value result = exp(x) * x;
    if (many_buffers) {
      result = x;
      for (int i = 0; i < cpu::kMaxCodeBuffers; ++i) result = result + feeds.any(DType::f32, {300});
    }
    auto executable = make_cpu_backend()->compile(graph, {result});
    EXPECT_EQ(executable->stats().kernels, 1);
    EXPECT_EQ(executable->stats().compiled_loops, 0);
    testing::expect_matches_reference(graph, {result}, feeds.arguments());
  }
}

TEST(CpuFusion, IntegerDivisionByZeroInALoopIsAnError) {
  Graph graph;
  Value a = graph.input("a", DType::i32, {600});
  Value b = graph.input("b", DType::i32, {600});
  auto executable = make_cpu_backend()->compile(graph, {(a + b) / b});
  Tensor ones = Tensor::from_doubles(DType::i32, {600}, std::vector<double>(600, 1.0));
  Tensor zero_at_end = ones.clone();
  zero_at_end.set(599, 0.0);
  EXPECT_NO_THROW(executable->run({ones, ones}));
  EXPECT_THROW(executable->run({ones, zero_at_end}), Error);
}

// dot_general with bias, scaling, gelu and the add of a tensor as oneDNN post-ops (a bias first as
// the matmul's bias argument), on plain and batched products, f32 and bf16 operands.
TEST(CpuFusion, GemmEpiloguesMatchReference) {
  for (DType dtype : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(dtype));
    Graph graph;
    testing::Feeds feeds(graph);
    Value x = feeds.any(dtype, {3, 24, 32}), w = feeds.any(dtype, {32, 40});
    Value b = feeds.any(DType::f32, {40}), r = feeds.any(DType::f32, {3, 24, 40});
    DotAttrs plain{{}, {}, {2}, {0}};
    Value biased = gelu(dot_general(x, w, plain, DType::f32) + broadcast_to(b, {3, 24, 40}));
    Value y = feeds.any(dtype, {3, 24, 32});
    DotAttrs batched{{0}, {0}, {2}, {2}};
    Value scores = dot_general(x, y, batched, DType::f32) * 0.125;
    // Another weight: cse would merge a second x·w into the first, which then has two readers.
    Value w2 = feeds.any(dtype, {32, 40});
    Value summed = r + dot_general(x, w2, plain, DType::f32);
    // A bias added first is the matmul's bias argument; after a scaling it stays a post-op; a
    // batched product's bias spans the batch.
    Value w3 = feeds.any(dtype, {32, 40});
    Value scaled_biased =
        dot_general(x, w3, plain, DType::f32) * 0.5 + broadcast_to(b, {3, 24, 40});
    Value c = feeds.any(DType::f32, {24}), y2 = feeds.any(dtype, {3, 24, 32});
    Value batched_biased = dot_general(x, y2, batched, DType::f32) + broadcast_to(c, {3, 24, 24});
    std::vector<Value> outputs = {biased, scores, summed, scaled_biased, batched_biased};
    auto executable = make_cpu_backend()->compile(graph, outputs);
    // Derived, not recorded: one kernel per product (five products, none shared), each with its
    // epilogue as post-ops; a missed fusion adds a kernel per unfused epilogue op.
    EXPECT_EQ(executable->stats().kernels, 5);
    testing::expect_matches_reference(graph, outputs, feeds.arguments(), {},
                                      dtype == DType::bf16 ? 10.0 : 1.0);
  }
}

// The added tensor may be a view: a reshape of one contiguous run of another kernel's result,
// read at its offset there (layer_norm_grads' dx added to a data gradient is one).
TEST(CpuFusion, GemmEpilogueAddsAViewOfAnotherResult) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {3, 24, 32}), w = feeds.any(DType::f32, {32, 40});
  Value run = exp(feeds.any(DType::f32, {2 * 3 * 24 * 40 + 7}));
  Value addend = reshape(slice(run, {2887}, {2887 + 3 * 24 * 40}), {3, 24, 40});
  Value summed = addend + dot_general(x, w, DotAttrs{{}, {}, {2}, {0}}, DType::f32);
  auto executable = make_cpu_backend()->compile(graph, {summed});
  // The exp loop, then the product with the add as its epilogue.
  EXPECT_EQ(executable->stats().kernels, 2);
  testing::expect_matches_reference(graph, {summed}, feeds.arguments());
}

// The same epilogues on f32 products rounded to bf16, which oneDNN does not give: Kiln's loop
// for the product, then each step over it (kernels_dot.cpp's apply_step).
TEST(CpuFusion, GemmEpiloguesOneDnnCannotFuseMatchReference) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {3, 24, 32}), w = feeds.any(DType::f32, {32, 40});
  Value b = feeds.any(DType::bf16, {40}), r = feeds.any(DType::bf16, {3, 24, 40});
  DotAttrs plain{{}, {}, {2}, {0}};
  Value biased = gelu(dot_general(x, w, plain, DType::bf16) + broadcast_to(b, {3, 24, 40}));
  Value y = feeds.any(DType::f32, {3, 24, 32});
  Value scores = dot_general(x, y, DotAttrs{{0}, {0}, {2}, {2}}, DType::bf16) * 0.125;
  Value w2 = feeds.any(DType::f32, {32, 40});
  Value summed = r + dot_general(x, w2, plain, DType::bf16);
  std::vector<Value> outputs = {biased, scores, summed};
  EXPECT_EQ(make_cpu_backend()->compile(graph, outputs)->stats().kernels, 3);
  testing::expect_matches_reference(graph, outputs, feeds.arguments());
}

// A gemm epilogue ending in a cast to bf16, through the heads' reshape: bf16 operands (oneDNN
// stores the bf16 destination) and f32 ones (oneDNN does not take an f32 product to bf16: the
// product and bias in scratch, then rounded), each one kernel, as the reference rounds them.
TEST(CpuFusion, GemmEpiloguesEndingInACastMatchReference) {
  for (DType dtype : {DType::bf16, DType::f32}) {
    SCOPED_TRACE(dtype_name(dtype));
    Graph graph;
    testing::Feeds feeds(graph);
    Value x = feeds.any(dtype, {3, 24, 32}), w = feeds.any(dtype, {32, 40});
    Value b = feeds.any(DType::f32, {40});
    DotAttrs plain{{}, {}, {2}, {0}};
    Value pre = dot_general(x, w, plain, DType::f32) + broadcast_to(b, {3, 24, 40});
    Value heads = cast(reshape(pre, {3, 24, 5, 8}), DType::bf16);
    auto executable = make_cpu_backend()->compile(graph, {heads});
    EXPECT_EQ(executable->stats().kernels, 1);
    testing::expect_matches_reference(graph, {heads}, feeds.arguments());
    // Rounded as a loop rounds the same product (read again, it is stored in f32 first): equal
    // bits, which a tolerance of an ulp would not tell from truncation.
    auto unfused = make_cpu_backend()->compile(graph, {heads, pre});
    EXPECT_EQ(unfused->stats().kernels, 2);
    Tensor fused_heads = executable->run(feeds.arguments())[0];
    Tensor loop_heads = unfused->run(feeds.arguments())[0];
    ASSERT_EQ(fused_heads.nbytes(), loop_heads.nbytes());
    EXPECT_EQ(std::memcmp(fused_heads.data(), loop_heads.data(), fused_heads.nbytes()), 0);
  }
}

// A scatter_add starting from a broadcast constant (the gradient of a gather: zeros) fills its
// output with the constant itself: no kernel and no buffer for the broadcast. Any other start
// (a tensor argument) is copied as before.
TEST(CpuFusion, ScatterAddFillsFromABroadcastConstant) {
  for (DType dtype : {DType::f32, DType::bf16, DType::i32}) {
    SCOPED_TRACE(dtype_name(dtype));
    Graph graph;
    testing::Feeds feeds(graph);
    Value indices = feeds.integers(DType::i32, {9}, 0, 5);
    Value updates = feeds.any(dtype, {9, 4});
    Value from_constant = scatter_add(full(graph, 1.5, dtype, {5, 4}), indices, updates, 0);
    auto single = make_cpu_backend()->compile(graph, {from_constant});
    EXPECT_EQ(single->stats().kernels, 1);  // the scatter alone: the broadcast needs no kernel
    // Only bf16 takes scratch: its sums accumulate in f32 (5 x 4 floats = 80 bytes, rounded up
    // to the arena's 64-byte alignment: 128).
    EXPECT_EQ(single->stats().arena_bytes, dtype == DType::bf16 ? 128 : 0);
    Value from_argument = scatter_add(feeds.any(dtype, {5, 4}), indices, updates, 0);
    testing::expect_matches_reference(graph, {from_constant, from_argument}, feeds.arguments());
  }
}

// A donated argument is overwritten by the kernel computing its output, which shares its bytes;
// a matrix multiply reading the argument (made after the update) still sees the old values.
TEST(CpuFusion, DonatedArgumentsAreWrittenInPlace) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value p = feeds.any(DType::f32, {64, 64});
  Value g = feeds.any(DType::f32, {64, 64});
  std::vector<Value> outputs = {p - 0.1 * g, matmul(p, g)};
  std::vector<Tensor> expected = evaluate_reference(graph, outputs, feeds.arguments());
  CompileSpec spec;
  spec.donations = {{0, 0}};
  auto executable = make_cpu_backend()->compile(graph, outputs, spec);
  std::vector<Tensor> arguments = {feeds.arguments()[0].clone(), feeds.arguments()[1]};
  std::vector<Tensor> results = executable->run(arguments);
  EXPECT_TRUE(results[0].shares_bytes_with(arguments[0]));
  testing::expect_outputs_close(results, expected);
  // A loop writing the donated bytes reads the argument for another of its results as well.
  std::vector<Value> siblings = {0.5 * g, p + g};
  std::vector<Tensor> sibling_expected = evaluate_reference(graph, siblings, feeds.arguments());
  arguments[0] = feeds.arguments()[0].clone();
  std::vector<Tensor> sibling_results =
      make_cpu_backend()->compile(graph, siblings, spec)->run(arguments);
  EXPECT_TRUE(sibling_results[0].shares_bytes_with(arguments[0]));
  testing::expect_outputs_close(sibling_results, sibling_expected);
  // With in-place updates off, the output is a tensor of its own.
  spec.options.disable("inplace");
  arguments[0] = feeds.arguments()[0].clone();
  results = make_cpu_backend()->compile(graph, outputs, spec)->run(arguments);
  EXPECT_FALSE(results[0].shares_bytes_with(arguments[0]));
  testing::expect_outputs_close(results, expected);
}

// A TrainStep update on the CPU backend writes parameters and AdamW moments into the tensors it
// was given (no new parameter tensors) and matches the same updates on the reference backend.
TEST(CpuFusion, TrainStepUpdatesParametersInPlace) {
  auto run = [](Backend& backend, bool expect_in_place) {
    Graph graph;
    Value x = graph.input("x", DType::f32, {8, 16});
    Value w = graph.input("w", DType::f32, {16, 4}, InputRole::weight);
    Value b = graph.input("b", DType::f32, {4}, InputRole::weight);
    Value loss = reduce_sum(tanh(matmul(x, w) + broadcast_to(b, {8, 4})) * 0.5);
    TrainStepConfig config;
    config.max_grad_norm = 1.0;
    Runtime runtime(backend);
    TrainStep step(graph, loss, {w, b}, {true, false}, config, runtime);
    std::mt19937_64 rng(9);
    TrainState state(runtime, {{"w", testing::random_tensor(rng, DType::f32, {16, 4})},
                               {"b", testing::random_tensor(rng, DType::f32, {4})}});
    TensorMap feeds = {{"x", testing::random_tensor(rng, DType::f32, {8, 16})}};
    auto addresses = [&] {
      auto data = [](const BufferMap& map, const char* name) {
        return dynamic_cast<const HostBuffer&>(*map.at(name)[0]).tensor().data();
      };
      return std::vector<const std::byte*>{
          data(state.param_buffers(), "w"), data(state.param_buffers(), "b"),
          data(state.slot_buffers(), "w.exp_avg"), data(state.slot_buffers(), "b.exp_avg_sq")};
    };
    std::vector<const std::byte*> before = addresses();
    for (int update = 0; update < 3; ++update) step.update(state, {feeds}, 1e-2);
    if (expect_in_place) {
      EXPECT_EQ(addresses(), before);
    }
    return std::pair{state.params(), state.optimizer()};
  };
  auto cpu = make_cpu_backend();
  auto reference = make_reference_backend();
  auto [fast_params, fast_optimizer] = run(*cpu, true);
  auto [oracle_params, oracle_optimizer] = run(*reference, false);
  for (const char* name : {"w", "b"}) {
    SCOPED_TRACE(name);
    EXPECT_ALLCLOSE(fast_params[name], oracle_params[name], 1e-5, 1e-6);
    const std::string slot = std::string(name) + ".exp_avg_sq";
    EXPECT_ALLCLOSE(fast_optimizer.slots[slot], oracle_optimizer.slots[slot], 1e-4, 1e-9);
  }
}

}  // namespace
}  // namespace kiln
