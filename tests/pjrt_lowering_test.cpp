// The StableHLO text of every op, checked structurally without a plugin: each op's case lowers
// to a module where every value is defined once before use, the op's StableHLO counterpart is
// present, and composites are gone; donations become tf.aliasing_output; the compile options
// bytes. (pjrt_ops_test parses and runs the same modules through XLA when a plugin is found.)
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "kiln/backends/pjrt/compile_options_proto.h"
#include "kiln/backends/pjrt/pjrt_backend.h"
#include "kiln/backends/pjrt/stablehlo_lowering.h"
#include "kiln/ir/op_registry.h"
#include "kiln/ir/ops.h"
#include "support/op_cases.h"

namespace kiln {
namespace {

using testing::Feeds;
using testing::Outputs;

// StableHLO (or CHLO) ops that the lowering of each Kiln op must contain.
std::vector<std::string> expected_ops(OpKind kind) {
  switch (kind) {
    case OpKind::input: return {};
    case OpKind::constant: return {"stablehlo.constant"};
    case OpKind::iota: return {"stablehlo.iota"};
    case OpKind::random_bits:
      return {"stablehlo.multiply", "stablehlo.shift_right_logical", "stablehlo.xor"};
    case OpKind::neg: return {"stablehlo.negate"};
    case OpKind::abs: return {"stablehlo.abs"};
    case OpKind::sign: return {"stablehlo.sign"};
    case OpKind::exp: return {"stablehlo.exponential"};
    case OpKind::log: return {"stablehlo.log"};
    case OpKind::tanh: return {"stablehlo.tanh"};
    case OpKind::logistic: return {"stablehlo.logistic"};
    case OpKind::sqrt: return {"stablehlo.sqrt"};
    case OpKind::rsqrt: return {"stablehlo.rsqrt"};
    case OpKind::erf: return {"chlo.erf"};
    case OpKind::logical_not: return {"stablehlo.not"};
    case OpKind::add: return {"stablehlo.add"};
    case OpKind::sub: return {"stablehlo.subtract"};
    case OpKind::mul: return {"stablehlo.multiply"};
    case OpKind::div: return {"stablehlo.divide"};
    case OpKind::max: return {"stablehlo.maximum", "stablehlo.select"};  // NaN-propagating
    case OpKind::min: return {"stablehlo.minimum", "stablehlo.select"};
    case OpKind::pow: return {"stablehlo.power"};
    case OpKind::logical_and: return {"stablehlo.and"};
    case OpKind::logical_or: return {"stablehlo.or"};
    case OpKind::compare: return {"stablehlo.compare", "comparison_direction GE"};
    case OpKind::select: return {"stablehlo.select"};
    case OpKind::cast: return {"stablehlo.convert"};
    case OpKind::broadcast: return {"stablehlo.broadcast_in_dim"};
    case OpKind::reshape: return {"stablehlo.reshape"};
    case OpKind::transpose: return {"stablehlo.transpose", "permutation = array<i64: 2, 0, 1>"};
    case OpKind::slice: return {"stablehlo.slice", "strides = array<i64: 2, 3, 1>"};
    case OpKind::concat: return {"stablehlo.concatenate", "dimension = 1 : i64"};
    case OpKind::pad: return {"stablehlo.pad", "edge_padding_high = array<i64: 2, 3>"};
    case OpKind::reduce_sum: return {"stablehlo.reduce", "stablehlo.add"};
    case OpKind::reduce_max: return {"stablehlo.reduce", "stablehlo.maximum"};
    case OpKind::dot_general:
      return {"stablehlo.dot_general", "lhs_batching_dimensions = [0]",
              "lhs_contracting_dimensions = [2]", "precision HIGHEST"};
    case OpKind::gather:
      return {"stablehlo.gather", "collapsed_slice_dims = [0]", "index_vector_dim = 2"};
    case OpKind::scatter_add:
      return {"stablehlo.scatter", "inserted_window_dims = [0]", "stablehlo.add"};
    case OpKind::softmax: return {"stablehlo.exponential", "stablehlo.reduce", "stablehlo.divide"};
    case OpKind::log_softmax: return {"stablehlo.exponential", "stablehlo.log"};
    case OpKind::layer_norm: return {"stablehlo.rsqrt", "stablehlo.reduce"};
    case OpKind::layer_norm_grads:
      return {"stablehlo.rsqrt", "stablehlo.reduce", "stablehlo.concatenate"};
    case OpKind::gelu: return {"chlo.erf"};
    case OpKind::gelu_grad: return {"chlo.erf", "stablehlo.exponential"};
    case OpKind::cross_entropy: return {"stablehlo.iota", "stablehlo.compare", "stablehlo.log"};
    case OpKind::attention: return {"stablehlo.dot_general", "stablehlo.exponential"};
    case OpKind::attention_grad:
      return {"stablehlo.dot_general", "stablehlo.exponential", "stablehlo.concatenate"};
    case OpKind::dropout: return {"stablehlo.xor", "stablehlo.select"};
    case OpKind::all_reduce:
      return {"stablehlo.all_reduce", "replica_groups = dense<[[0]]> : tensor<1x1xi64>"};
  }
  return {};
}

// Every SSA value is defined once, before its uses (function and block arguments where they are
// declared); every op result is typed; braces balance.
void expect_well_formed(const std::string& text) {
  std::set<std::string> defined;
  std::regex argument(R"((%[A-Za-z0-9_]+): tensor)");
  std::regex definition(R"(^\s*(%[A-Za-z0-9_]+) = )");
  std::regex use(R"(%[A-Za-z0-9_]+)");
  int depth = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    for (char c : line) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (line.find("}) {") != std::string::npos) {
      EXPECT_NE(line.find(" -> tensor<"), std::string::npos) << "untyped: " << line;
    }
    bool declares_arguments = line.find("func.func") != std::string::npos ||
                              line.find("^bb0(") != std::string::npos ||
                              line.find_first_not_of(' ') == line.find("%arg");
    if (declares_arguments) {
      for (auto it = std::sregex_iterator(line.begin(), line.end(), argument);
           it != std::sregex_iterator(); ++it) {
        EXPECT_TRUE(defined.insert((*it)[1]).second) << "redefined: " << line;
      }
      continue;
    }
    std::smatch match;
    bool defines = std::regex_search(line, match, definition);
    std::string result = defines ? match[1].str() : "";
    std::string uses = defines ? match.suffix().str() : line;
    for (auto it = std::sregex_iterator(uses.begin(), uses.end(), use);
         it != std::sregex_iterator(); ++it) {
      EXPECT_EQ(defined.count(it->str()), 1u) << "used before definition: " << line;
    }
    if (defines) {
      EXPECT_TRUE(defined.insert(result).second) << "redefined: " << line;
      // An op with a region is typed on the line that closes the region.
      bool opens_region = line.size() >= 2 && line.compare(line.size() - 2, 2, "({") == 0;
      if (!opens_region) {
        EXPECT_NE(line.find(" -> tensor<"), std::string::npos) << "untyped: " << line;
      }
    }
  }
  EXPECT_EQ(depth, 0);
}

std::string lowered(const Graph& graph, const Outputs& outputs, const CompileSpec& spec = {}) {
  return pjrt::lower_to_stablehlo(compile_pjrt_program(graph, outputs, spec));
}

class PjrtLowering : public ::testing::TestWithParam<OpKind> {};

TEST_P(PjrtLowering, EveryDtypeLowersToWellFormedStableHlo) {
  static const std::map<OpKind, testing::OpCase> cases = testing::op_cases();
  OpKind kind = GetParam();
  auto found = cases.find(kind);
  ASSERT_NE(found, cases.end()) << "no test case for op " << op_name(kind);
  for (DType dtype : found->second.dtypes) {
    SCOPED_TRACE(std::string(op_name(kind)) + " " + std::string(dtype_name(dtype)));
    Graph graph;
    Feeds feeds(graph, 7);
    Outputs outputs = found->second.build(feeds, dtype);
    std::string text = lowered(graph, outputs);
    expect_well_formed(text);
    EXPECT_NE(text.find("func.func public @main("), std::string::npos);
    EXPECT_NE(text.find("\"func.return\""), std::string::npos);
    if (dtype == DType::f32) {
      for (const std::string& piece : expected_ops(kind)) {
        EXPECT_NE(text.find(piece), std::string::npos) << piece << " missing from\n" << text;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, PjrtLowering, ::testing::ValuesIn(testing::all_ops()),
                         [](const ::testing::TestParamInfo<OpKind>& info) {
                           return std::string(op_name(info.param));
                         });

TEST(PjrtLowering, DonatedInputsAliasTheirOutputs) {
  Graph graph;
  Value w = graph.input("w", DType::f32, {4}, InputRole::weight);
  Value x = graph.input("x", DType::f32, {4});
  Outputs outputs = {reduce_sum(x), w - x};
  std::string text = lowered(graph, outputs, CompileSpec{.donations = {{0, 1}}});
  EXPECT_NE(text.find("%arg0: tensor<4xf32> {tf.aliasing_output = 1 : i32}"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("%arg1: tensor<4xf32> {"), std::string::npos) << text;
  EXPECT_NE(text.find("-> (tensor<f32>, tensor<4xf32>)"), std::string::npos) << text;

  CompileOptions no_in_place;
  no_in_place.disable("inplace");
  std::string plain =
      lowered(graph, outputs, CompileSpec{.options = no_in_place, .donations = {{0, 1}}});
  EXPECT_EQ(plain.find("tf.aliasing_output"), std::string::npos) << plain;
}

TEST(PjrtLowering, CompositesMustBeDecomposedFirst) {
  Graph graph;
  Value x = softmax(graph.input("x", DType::f32, {2, 3}));
  pjrt::StableHloWriter writer;
  pjrt::Ssa operand{"%arg0", "f32", {2, 3}};
  EXPECT_NE(testing::error_of([&] { pjrt::lower_node(writer, x.node(), {operand}, 1); })
                .find("no lowering for op softmax"),
            std::string::npos);
}

TEST(PjrtLowering, ConstantsKeepTheirExactBytes) {
  Graph graph;
  Tensor value = Tensor::from_doubles(DType::f32, {2}, {1.0, -2.5});
  Tensor flags = Tensor::from_doubles(DType::boolean, {2, 2}, {1, 0, 0, 1});
  std::string text = lowered(graph, {constant(graph, value), constant(graph, flags)});
  EXPECT_NE(text.find("dense<\"0x0000803F000020C0\"> : tensor<2xf32>"), std::string::npos) << text;
  EXPECT_NE(text.find("dense<[[true, false], [false, true]]> : tensor<2x2xi1>"), std::string::npos)
      << text;
}

// At N replicas: the module says so, and each all_reduce sums over the one group of all of them
// (half precision in f32, rounded once, as reduce_sum).
TEST(PjrtLowering, AllReduceSumsOverEveryReplica) {
  Graph graph;
  Value x = graph.input("x", DType::f32, {4});
  Value h = graph.input("h", DType::bf16, {2, 3});
  Program program = compile_pjrt_program(graph, {all_reduce(x), all_reduce(h)}, {});
  std::string text = pjrt::lower_to_stablehlo(program, 2);
  expect_well_formed(text);
  EXPECT_NE(text.find("mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32"),
            std::string::npos) << text;
  EXPECT_NE(text.find("\"stablehlo.all_reduce\"(%arg0) ({"), std::string::npos) << text;
  EXPECT_NE(text.find("{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> "
                      "tensor<4xf32>"),
            std::string::npos) << text;
  EXPECT_NE(text.find("{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x3xf32>) -> "
                      "tensor<2x3xf32>"),
            std::string::npos) << text;
  EXPECT_NE(text.find("\"stablehlo.add\"(%"), std::string::npos) << text;
  EXPECT_NE(text.find(": (tensor<2x3xf32>) -> tensor<2x3xbf16>"), std::string::npos) << text;
  EXPECT_NE(pjrt::lower_to_stablehlo(program, 4).find("dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>"),
            std::string::npos);
  EXPECT_NE(pjrt::lower_to_stablehlo(program).find("mhlo.num_replicas = 1 : i32"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { pjrt::lower_to_stablehlo(program, 0); })
                .find("replicas must be at least 1"),
            std::string::npos);
}

TEST(PjrtLowering, CompileOptionsNameTheReplicasAndOnePartition) {
  // CompileOptionsProto{executable_build_options: {num_replicas: N, num_partitions: 1}}.
  EXPECT_EQ(pjrt::compile_options(1), std::string("\x1a\x04\x20\x01\x28\x01", 6));
  EXPECT_EQ(pjrt::compile_options(8), std::string("\x1a\x04\x20\x08\x28\x01", 6));
  // 300 replicas: a two-byte varint.
  EXPECT_EQ(pjrt::compile_options(300), std::string("\x1a\x05\x20\xac\x02\x28\x01", 7));
  EXPECT_NE(testing::error_of([] { pjrt::compile_options(0); }).find("replicas must be at least 1"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
