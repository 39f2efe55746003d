// Every op of the registry through XLA:CPU (the PJRT backend on the xla-cpu-pjrt plugin) against
// the reference backend, for each dtype the op accepts, on the cases cpu_ops_test runs; skipped
// when no CPU plugin is found.
#include "cpu_test_util.h"
#include "kiln/backends/pjrt/compile_options_proto.h"
#include "kiln/backends/pjrt/pjrt_backend.h"
#include "kiln/backends/pjrt/pjrt_client.h"
#include "kiln/backends/pjrt/stablehlo_lowering.h"
#include "pjrt_test_util.h"
#include "support/op_cases.h"

namespace kiln {
namespace {

using testing::Feeds;
using testing::Outputs;

class PjrtOp : public ::testing::TestWithParam<OpKind> {};

TEST_P(PjrtOp, MatchesReferenceForEveryDtype) {
  std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  static const std::map<OpKind, testing::OpCase> cases = testing::op_cases();
  std::unique_ptr<Backend> backend = make_pjrt_backend(plugin);
  OpKind kind = GetParam();
  auto found = cases.find(kind);
  ASSERT_NE(found, cases.end()) << "no test case for op " << op_name(kind);
  for (DType dtype : found->second.dtypes) {
    SCOPED_TRACE(std::string(op_name(kind)) + " " + std::string(dtype_name(dtype)));
    Graph graph;
    Feeds feeds(graph, 7);
    Outputs outputs = found->second.build(feeds, dtype);
    std::vector<Tensor> expected = evaluate_reference(graph, outputs, feeds.arguments());
    std::vector<Tensor> actual = backend->compile(graph, outputs)->run(feeds.arguments());
    testing::expect_outputs_close(actual, expected);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, PjrtOp, ::testing::ValuesIn(testing::all_ops()),
                         [](const ::testing::TestParamInfo<OpKind>& info) {
                           return std::string(op_name(info.param));
                         });

// XLA accepts the all_reduce lowering at two replicas (running it needs one run per device, which
// the client does not do yet: only the compile is checked).
TEST(PjrtCollective, AllReduceAtTwoReplicasCompiles) {
  std::string plugin = testing::cpu_plugin_path();
  KILN_SKIP_WITHOUT_CPU_PLUGIN(plugin);
  pjrt::Client& client = pjrt::Client::open(plugin);
  if (client.devices().size() < 2) GTEST_SKIP() << "the plugin has one device";
  Graph graph;
  Value x = graph.input("x", DType::f32, {4});
  Value n = graph.input("n", DType::i64, {3});
  Value h = graph.input("h", DType::bf16, {2});
  Outputs outputs = {exp(all_reduce(x)), all_reduce(n), all_reduce(h)};
  std::string module = pjrt::lower_to_stablehlo(compile_pjrt_program(graph, outputs, {}), 2);
  EXPECT_EQ(client.compile(module, pjrt::compile_options(2))->num_outputs(), 3u);
}

}  // namespace
}  // namespace kiln
