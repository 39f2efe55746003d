// KILN_CPU_PROFILE: each kernel described by its kind, fused ops and result, and the report an
// executable prints when it is freed (only with the variable set): over the runs after the first,
// or over the only one.
#include <algorithm>
#include <cstdlib>

#include "cpu_test_util.h"
#include "kiln/backends/cpu/kernel_profile.h"

namespace kiln {
namespace {

TEST(CpuProfile, DescribesEachKernel) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {4, 8}), w = feeds.any(DType::f32, {8, 3});
  Value y = dot_general(gelu(x) * 2.0, w, DotAttrs{{}, {}, {1}, {0}}, DType::f32);
  auto executable = make_cpu_backend()->compile(graph, {y});
  const Program& program = dynamic_cast<CpuExecutable&>(*executable).program();
  ASSERT_EQ(program.kernels.size(), 2u);
  const Graph& lowered = *program.module.graph;
  EXPECT_EQ(cpu::describe_kernel(lowered, program.kernels[0]),
            "loop gelu,broadcast,mul -> f32(4,8)");
  EXPECT_EQ(cpu::describe_kernel(lowered, program.kernels[1]), "gemm dot_general -> f32(4,3)");
}

// What an executable of a two-kernel graph prints to stderr when freed after `runs` runs.
std::string report_after(int runs) {
  Graph graph;
  testing::Feeds feeds(graph);
  Value x = feeds.any(DType::f32, {64, 64});
  Value y = softmax(exp(x) + 1.0, 1);
  std::vector<Tensor> arguments = feeds.arguments();
  ::testing::internal::CaptureStderr();
  {
    auto executable = make_cpu_backend()->compile(graph, {y});
    for (int run = 0; run < runs; ++run) executable->run(arguments);
  }
  return ::testing::internal::GetCapturedStderr();
}

TEST(CpuProfile, ReportsTheCostliestKernelsWhenFreed) {
  EXPECT_EQ(report_after(1), "");  // no variable: no report
  setenv("KILN_CPU_PROFILE", "1", 1);
  std::string report = report_after(3);
  unsetenv("KILN_CPU_PROFILE");
  EXPECT_NE(report.find("kernel profile: 2 kernels"), std::string::npos) << report;
  EXPECT_NE(report.find("over 2 runs after the first"), std::string::npos) << report;
  // One line per kernel shown: the top 1 of 2.
  EXPECT_EQ(std::count(report.begin(), report.end(), '\n'), 2) << report;
}

TEST(CpuProfile, ReportsTheOnlyRunOfAnExecutableRunOnce) {
  setenv("KILN_CPU_PROFILE", "5", 1);
  std::string report = report_after(1);
  unsetenv("KILN_CPU_PROFILE");
  EXPECT_NE(report.find("over 1 run (the only one"), std::string::npos) << report;
  EXPECT_EQ(std::count(report.begin(), report.end(), '\n'), 3) << report;
}

}  // namespace
}  // namespace kiln
