// bf16 mixed precision: every f32 dot_general reads bf16 casts of its operands and keeps its f32
// result, cse leaves one cast per weight, attention and its gradient read bf16 q, k, v (and
// cotangent) and keep f32 results (their kernels' softmax stays f32), and results stay within bf16 rounding of the f32 ones on the
// reference backend (which applies the policy too), on the CPU backend and on a BERT-tiny step.
#include <cmath>
#include <map>

#include "compiler_test_util.h"
#include "kiln/autodiff/grad.h"
#include "kiln/ir/ops.h"

namespace kiln {

// Names the optimizer in the test's name (gtest prints parameters for ctest); found by argument-
// dependent lookup, so in namespace kiln.
void PrintTo(const OptimizerConfig& config, std::ostream* out) { *out << config.name; }

namespace {

using testing::count_op;

CompileOptions bf16_options() {
  CompileOptions options;
  options.bf16 = true;
  return options;
}

// Casts to bf16 that read the input `input` directly.
int64_t bf16_casts_of(const Module& module, int32_t input) {
  int64_t count = 0;
  const Graph& graph = *module.graph;
  for (int32_t id : live_nodes(graph, module.output_values())) {
    const Node& node = graph.node(id);
    count += node.op == OpKind::cast && node.dtype == DType::bf16 && node.inputs[0] == input;
  }
  return count;
}

TEST(CompilerBf16, F32ProductsReadBf16CastsAndKeepTheirF32Result) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {4, 3});
  Value w = graph.input("w", DType::f32, {3, 5});
  Value xd = graph.input("xd", DType::f64, {4, 3});
  Value xi = graph.input("xi", DType::i32, {4, 3});
  Value xb = graph.input("xb", DType::bf16, {4, 3});
  Value wb = graph.input("wb", DType::bf16, {3, 5});
  DotAttrs rows_by_cols{{}, {}, {1}, {0}};
  std::vector<Value> outputs = {matmul(x, w), matmul(xd, cast(w, DType::f64)),
                                matmul(xi, cast(w, DType::i32)),
                                dot_general(xb, wb, rows_by_cols, DType::f32)};
  Module module = use_bf16_matmuls(copy_module(graph, outputs, false), true);
  const Graph& g = *module.graph;
  const Node& product = g.node(module.outputs[0]);
  EXPECT_EQ(product.dtype, DType::f32);
  for (int32_t operand : product.inputs) {
    EXPECT_EQ(g.node(operand).op, OpKind::cast);
    EXPECT_EQ(g.node(operand).dtype, DType::bf16);
  }
  EXPECT_EQ(g.node(g.node(product.inputs[0]).inputs[0]).op, OpKind::input);
  // f64, integer and already-bf16 products are left as they are.
  for (size_t i = 1; i < outputs.size(); ++i) {
    const Node& other = g.node(module.outputs[i]);
    EXPECT_EQ(g.node(other.inputs[0]).op, OpKind::input) << "output " << i;
  }
  EXPECT_EQ(count_op(module, OpKind::cast), 4);  // 2 new, plus w to f64 and to i32
  EXPECT_EQ(testing::input_names(g), testing::input_names(graph));
}

TEST(CompilerBf16, ForwardAndBackwardShareOneCastOfTheWeight) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {4, 3});
  Value w = graph.input("w", DType::f32, {3, 5}, InputRole::weight);
  Value h = matmul(x, w);
  Value loss = reduce_sum(h * h);
  std::vector<Value> grads = grad(loss, {x, w});  // dx = 2h w^T reads w again
  Program program = compile_program(graph, {loss, grads[0], grads[1]}, {},
                                    {[](OpKind) { return true; }}, bf16_options());
  EXPECT_EQ(count_op(program.module, OpKind::dot_general), 3);
  EXPECT_EQ(bf16_casts_of(program.module, program.module.graph->inputs()[1]), 1);
  EXPECT_EQ(bf16_casts_of(program.module, program.module.graph->inputs()[0]), 1);
  CompileOptions no_cse = bf16_options();
  no_cse.disable("cse");
  Program unshared = compile_program(graph, {loss, grads[0], grads[1]}, {},
                                     {[](OpKind) { return true; }}, no_cse);
  EXPECT_EQ(bf16_casts_of(unshared.module, unshared.module.graph->inputs()[1]), 2);
}

TEST(CompilerBf16, AttentionAndItsGradientReadBf16AndGiveF32) {
  Graph graph;
  Value q = graph.input("q", DType::f32, {2, 4, 8});
  Value k = graph.input("k", DType::f32, {2, 4, 8});
  Value v = graph.input("v", DType::f32, {2, 4, 8});
  Value mask = graph.input("mask", DType::f32, {2, 1, 4});
  Value out = attention(q, k, v, mask, 0.35);
  std::vector<Value> outputs = grad(reduce_sum(out * out), {q, k, v});
  outputs.push_back(out);
  Program program = compile_program(graph, outputs, {}, {[](OpKind) { return true; }},
                                    bf16_options());
  const Graph& g = *program.module.graph;
  EXPECT_EQ(count_op(program.module, OpKind::attention), 1);
  EXPECT_EQ(count_op(program.module, OpKind::attention_grad), 1);
  for (int32_t id : live_nodes(g, program.module.output_values())) {
    const Node& node = g.node(id);
    if (node.op != OpKind::attention && node.op != OpKind::attention_grad) continue;
    EXPECT_EQ(node.dtype, DType::f32);
    // q, k, v and (for the gradient) the cotangent in bf16; the mask and the output stay f32.
    std::vector<size_t> half = {0, 1, 2};
    if (node.op == OpKind::attention_grad) half.push_back(5);
    for (size_t i : half) EXPECT_EQ(g.node(node.inputs[i]).dtype, DType::bf16) << i;
    EXPECT_EQ(g.node(node.inputs[3]).dtype, DType::f32);
  }
  // Without bf16 both stay f32.
  Program f32 = compile_program(graph, outputs, {}, {[](OpKind) { return true; }}, {});
  for (const Node& node : f32.module.graph->nodes()) EXPECT_NE(node.dtype, DType::bf16);
}

// Whether `value` is f32 rounded to bf16: cast(cast(f32 value, bf16), f32).
bool rounded_through_bf16(const Graph& graph, int32_t value) {
  const Node& up = graph.node(value);
  if (up.op != OpKind::cast || up.dtype != DType::f32) return false;
  const Node& down = graph.node(up.inputs[0]);
  return down.op == OpKind::cast && down.dtype == DType::bf16 &&
         graph.node(down.inputs[0]).dtype == DType::f32;
}

// A backend without bf16 products gets f32 products of operands rounded through bf16: simplify
// keeps the round trip (it changes values) and still reads attention's transposed heads in place
// through it, so the program has the transposes of the bf16 one, no more.
TEST(CompilerBf16, WithoutBf16ProductsOperandsRoundTripThroughBf16) {
  Graph graph;
  Value q = graph.input("q", DType::f32, {2, 4, 2, 8});  // [batch, seq, heads, head_dim]
  Value k = graph.input("k", DType::f32, {2, 4, 2, 8});
  Value v = graph.input("v", DType::f32, {2, 4, 2, 8});
  Value w = graph.input("w", DType::f32, {16, 16}, InputRole::weight);
  Value mask = graph.input("mask", DType::f32, {2, 1, 1, 4});
  auto heads = [](const Value& x) { return transpose(x, {0, 2, 1, 3}); };
  Value context = attention(heads(q), heads(k), heads(v), mask, 0.35);
  Value out = matmul(reshape(transpose(context, {0, 2, 1, 3}), {8, 16}), w);
  BackendCapabilities native{[](OpKind) { return true; }};
  native.dots_read_strided_operands = true;
  BackendCapabilities f32_products = native;
  f32_products.bf16_products = false;
  Program bf16 = compile_program(graph, {out}, {}, native, bf16_options());
  Program rounded = compile_program(graph, {out}, {}, f32_products, bf16_options());
  const Graph& g = *rounded.module.graph;
  int64_t dots = 0;
  for (int32_t id : live_nodes(g, rounded.module.output_values())) {
    const Node& node = g.node(id);
    if (node.op != OpKind::dot_general) continue;
    ++dots;
    EXPECT_EQ(node.dtype, DType::f32);
    for (int32_t operand : node.inputs) {
      EXPECT_TRUE(rounded_through_bf16(g, operand)) << op_name(g.node(operand).op);
    }
  }
  // The projection's product; attention keeps its bf16 operands on both paths (its kernels widen
  // them and round the probabilities to bf16 themselves).
  EXPECT_EQ(dots, 1);
  int64_t attentions = 0;
  for (int32_t id : live_nodes(g, rounded.module.output_values())) {
    const Node& node = g.node(id);
    if (node.op != OpKind::attention) continue;
    ++attentions;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(g.node(node.inputs[i]).dtype, DType::bf16) << i;
  }
  EXPECT_EQ(attentions, 1);
  EXPECT_EQ(count_op(rounded.module, OpKind::dot_general), count_op(bf16.module, OpKind::dot_general));
  EXPECT_EQ(count_op(rounded.module, OpKind::transpose), count_op(bf16.module, OpKind::transpose));
  // One cast back to f32 per operand of the product.
  EXPECT_EQ(count_op(rounded.module, OpKind::cast), count_op(bf16.module, OpKind::cast) + 2);
}

// A small transformer-like block: products, layer norm, softmax.
struct Block {
  Graph graph;
  testing::Feeds feeds{graph, 7};
  std::vector<Value> outputs;

  Block() {
    Value x = feeds.any(DType::f32, {6, 16});
    Value w1 = feeds.any(DType::f32, {16, 32}, -0.5, 0.5);
    Value w2 = feeds.any(DType::f32, {32, 16}, -0.5, 0.5);
    Value gamma = feeds.any(DType::f32, {16}, 0.5, 1.5);
    Value beta = feeds.any(DType::f32, {16});
    Value h = gelu(matmul(x, w1));
    Value y = layer_norm(matmul(h, w2) + x, gamma, beta, 1e-12);
    outputs = {y, softmax(matmul(y, transpose(y, {1, 0})))};
  }
};

TEST(CompilerBf16, ReferenceBackendAppliesThePolicyWithinBf16Rounding) {
  Block block;
  std::unique_ptr<Backend> reference = make_reference_backend();
  std::vector<Tensor> f32 =
      reference->compile(block.graph, block.outputs)->run(block.feeds.arguments());
  std::vector<Tensor> bf16 =
      reference->compile(block.graph, block.outputs, CompileSpec{bf16_options(), {}})
          ->run(block.feeds.arguments());
  ASSERT_EQ(bf16.size(), f32.size());
  for (size_t i = 0; i < f32.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    EXPECT_EQ(bf16[i].dtype(), DType::f32);
    // bf16 keeps 8 bits of mantissa: operands round by up to 2^-9 relative.
    EXPECT_ALLCLOSE(bf16[i], f32[i], 3e-2, 3e-2);
    EXPECT_FALSE(testing::compare_tensors(bf16[i], f32[i], 0.0, 0.0).empty());
  }
}

TEST(CompilerBf16, CpuBackendAgreesWithTheReferenceInBf16) {
  Block block;
  CompileSpec spec{bf16_options(), {}};
  std::vector<Tensor> reference = make_reference_backend()
                                      ->compile(block.graph, block.outputs, spec)
                                      ->run(block.feeds.arguments());
  std::vector<Tensor> cpu =
      make_cpu_backend()->compile(block.graph, block.outputs, spec)->run(block.feeds.arguments());
  // The same bf16 operands; only the f32 accumulation order differs.
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_ALLCLOSE(cpu[i], reference[i], 1e-4, 1e-5);
}

// The L2 norm of a - b (of a alone when b is null), over every element.
double distance(const Tensor& a, const Tensor* b) {
  double sum = 0.0;
  for (int64_t j = 0; j < a.numel(); ++j) {
    const double d = a.get(j) - (b != nullptr ? b->get(j) : 0.0);
    sum += d * d;
  }
  return std::sqrt(sum);
}

// Each optimizer's first step, in bf16 and in f32, on BERT tiny.
class CompilerBf16Optimizer : public ::testing::TestWithParam<OptimizerConfig> {};

TEST_P(CompilerBf16Optimizer, BertTinyTrainingStepStaysCloseToF32) {
  const std::string optimizer = GetParam().name;
  testing::BertTinyUpdate update(2, 8, bf16_options(), GetParam());
  const testing::RecordedProgram& recorded = update.program();
  EXPECT_TRUE(recorded.spec.options.bf16);
  // The update's outputs: loss, gradient norm, finite flag, update count, then the parameters
  // and the optimizer's slots, each donated by its input (whose value before the update is kept
  // here: a run with donations may overwrite it).
  const Graph& graph = *recorded.graph;
  std::map<int32_t, int32_t> donor;  // output -> input
  for (const Donation& donation : recorded.spec.donations) donor[donation.output] = donation.input;
  std::vector<Tensor> before;
  for (const Tensor& argument : recorded.arguments) before.push_back(argument.clone());
  std::unique_ptr<Backend> reference = make_reference_backend();
  std::vector<Tensor> f32 = reference->compile(graph, recorded.outputs)->run(before);
  std::vector<Tensor> bf16 =
      reference->compile(graph, recorded.outputs, CompileSpec{recorded.spec.options, {}})
          ->run(before);
  double loss = f32[0].get(0), norm = f32[1].get(0);
  EXPECT_NE(bf16[0].get(0), loss);
  EXPECT_NEAR(bf16[0].get(0), loss, 1e-2 * std::fabs(loss));
  EXPECT_NEAR(bf16[1].get(0), norm, 5e-2 * norm);
  EXPECT_EQ(bf16[2].get(0), 1.0);
  EXPECT_EQ(bf16[3].get(0), f32[3].get(0));
  constexpr size_t kFirst = 4;
  const size_t params = update.parameter_count;
  ASSERT_GT(f32.size(), kFirst + params);
  // The largest first step of an element: lr for the optimizers that normalize by the gradient
  // (AdamW, Adagrad, Adafactor) or scale it (SGD, gradients below 1 here); RMSprop divides by
  // sqrt(1 - alpha) |g| = 0.1 |g|, so 10 lr.
  const double largest_step =
      (optimizer == "rmsprop" ? 10.0 : 1.0) * testing::BertTinyUpdate::kLearningRate;
  for (size_t i = kFirst; i < f32.size(); ++i) {
    ASSERT_TRUE(donor.count(static_cast<int32_t>(i))) << "output " << i;
    const int32_t input = donor.at(static_cast<int32_t>(i));
    const std::string& name = graph.input_name(graph.inputs()[static_cast<size_t>(input)]);
    SCOPED_TRACE("output " + std::to_string(i) + ": " + name);
    EXPECT_EQ(bf16[i].dtype(), DType::f32);
    if (i < kFirst + params) {
      // A parameter: the step itself (after - before) in bf16 against f32. A first step moves
      // each weight along its gradient (AdamW, Adagrad, RMSprop: by about its sign), so the two
      // steps agree up to the few elements whose gradient is small enough for bf16 to flip its
      // sign; a step of the wrong sign or size is as far from f32's as the step is long. The
      // attention key biases' gradients are zero but for rounding (a softmax ignores shifts),
      // so their steps are rounding noise of either sign and size: only the optimizer's bound
      // on a first step is checked (biases have no decay).
      const Tensor& old = before[static_cast<size_t>(input)];
      Tensor step_bf16 = Tensor(DType::f32, old.shape()), step_f32 = step_bf16.clone();
      for (int64_t j = 0; j < old.numel(); ++j) {
        step_bf16.set(j, bf16[i].get(j) - old.get(j));
        step_f32.set(j, f32[i].get(j) - old.get(j));
      }
      const double length = distance(step_f32, nullptr);
      if (name.find("attention.self.key.bias") != std::string::npos) {
        for (int64_t j = 0; j < old.numel(); ++j) {
          EXPECT_LE(std::fabs(step_bf16.get(j)), 1.0001 * largest_step) << "element " << j;
        }
      } else {
        ASSERT_GT(length, 0.0);
        EXPECT_LT(distance(step_bf16, &step_f32), 0.25 * length);
      }
    } else {
      // A slot (moments, sums of squared gradients, factored second moments): on its tensor's
      // largest entry. The key biases' slots hold rounding noise (up to 1.1e-8 in SGD's
      // momentum, which keeps the gradient itself): an absolute bound far below the other
      // gradients.
      double largest = 0.0;
      for (int64_t j = 0; j < f32[i].numel(); ++j) {
        largest = std::max(largest, std::fabs(f32[i].get(j)));
      }
      const bool noise = name.find("attention.self.key.bias") != std::string::npos;
      EXPECT_ALLCLOSE(bf16[i], f32[i], 5e-2, noise ? 5e-8 : 0.1 * largest);
    }
  }
}

// SGD with momentum, so that it has a slot too.
INSTANTIATE_TEST_SUITE_P(EveryOptimizer, CompilerBf16Optimizer,
                         ::testing::Values(OptimizerConfig{.name = "adamw_torch"},
                                           OptimizerConfig{.name = "adafactor"},
                                           OptimizerConfig{.name = "sgd",
                                                           .args = {{"momentum", "0.9"}}},
                                           OptimizerConfig{.name = "adagrad"},
                                           OptimizerConfig{.name = "rmsprop"}),
                         [](const ::testing::TestParamInfo<OptimizerConfig>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace kiln
