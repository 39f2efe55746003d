// Every op of the registry on the CPU backend against the reference backend, for each dtype the op
// accepts, on small random graphs (NaNs, ties, broadcasts and long rows included). The cases are
// keyed by op and the suite is instantiated from the op list, so a new op without a CPU case
// fails here.
#include "cpu_test_util.h"
#include "kiln/ir/op_registry.h"
#include "support/op_cases.h"

namespace kiln {
namespace {

using testing::Feeds;
using testing::Outputs;

class CpuOp : public ::testing::TestWithParam<OpKind> {};

// Composites run both through their direct kernels and through their decompositions.
TEST_P(CpuOp, MatchesReferenceForEveryDtype) {
  static const std::map<OpKind, testing::OpCase> cases = testing::op_cases();
  OpKind kind = GetParam();
  auto found = cases.find(kind);
  ASSERT_NE(found, cases.end()) << "no CPU test case for op " << op_name(kind);
  bool composite = op_info(kind).category == OpCategory::composite;
  for (DType dtype : found->second.dtypes) {
    for (bool decompose : composite ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
      SCOPED_TRACE(std::string(op_name(kind)) + " " + std::string(dtype_name(dtype)) +
                   (decompose ? " decomposed" : ""));
      Graph graph;
      Feeds feeds(graph, 7);
      Outputs outputs = found->second.build(feeds, dtype);
      bool present = false;
      for (const Node& node : graph.nodes()) present = present || node.op == kind;
      EXPECT_TRUE(present) << "the case builds no " << op_name(kind) << " node";
      testing::expect_matches_reference(graph, outputs, feeds.arguments(),
                                        CpuBackendOptions{.decompose_composites = decompose});
    }
  }
}

// Both backends run one replica, where all_reduce gives back its operand bit for bit.
TEST(CpuCollective, AllReduceAtOneReplicaIsTheIdentity) {
  for (DType dtype : {DType::f32, DType::bf16, DType::f64, DType::i64, DType::u32}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    Graph graph;
    Feeds feeds(graph, 3);
    Value x = feeds.any(dtype, {5, 33});
    Outputs outputs = {all_reduce(x), all_reduce(all_reduce(x))};
    const Tensor& argument = feeds.arguments()[0];
    for (auto& backend : {make_reference_backend(), make_cpu_backend()}) {
      SCOPED_TRACE(std::string(backend->name()));
      std::vector<Tensor> results = backend->compile(graph, outputs)->run(feeds.arguments());
      for (const Tensor& result : results) EXPECT_ALLCLOSE(result, argument, 0.0, 0.0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, CpuOp, ::testing::ValuesIn(testing::all_ops()),
                         [](const ::testing::TestParamInfo<OpKind>& info) {
                           return std::string(op_name(info.param));
                         });

}  // namespace
}  // namespace kiln
