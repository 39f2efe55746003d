// Every op of the registry through XLA:CPU (the PJRT backend on the xla-cpu-pjrt plugin) against
// the reference backend, for each dtype the op accepts, on the cases cpu_ops_test runs; skipped
// when no CPU plugin is found.
#include "cpu_test_util.h"
#include "kiln/backends/pjrt/pjrt_backend.h"
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

}  // namespace
}  // namespace kiln
