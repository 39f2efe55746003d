// KILN_MAX_CPU_ISA on the command line: `kiln devices` lists the CPU's instruction sets and those
// in use, `kiln bench` reports the capped ISA ("cpu_isa") and measures the capped machine's peak,
// and an unknown value is an error naming the variable.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "kiln/backends/cpu/cpu_isa.h"

namespace kiln {
namespace {

using cpu::CpuIsa;

testing::CommandResult run_capped(const std::string& cap, const std::string& arguments) {
  return testing::run_command("KILN_MAX_CPU_ISA=" + cap + " " + KILN_BINARY + " " + arguments);
}

std::string name_of(CpuIsa isa) { return std::string(cpu::cpu_isa_name(isa)); }

TEST(CliCpuIsa, DevicesListsTheLevelsAndThoseInUse) {
  testing::CommandResult result = run_capped("AVX2", "devices");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::string levels = "  this CPU:";
  for (int level = 0; level <= static_cast<int>(cpu::detected_cpu_isa()); ++level) {
    levels += " " + name_of(static_cast<CpuIsa>(level));
  }
  EXPECT_NE(result.output.find(levels + "\n"), std::string::npos) << result.output;
  const std::string capped = name_of(std::min(cpu::detected_cpu_isa(), CpuIsa::avx2));
  EXPECT_NE(result.output.find("  in use:   " + capped + " (KILN_MAX_CPU_ISA=avx2); loop kernels " +
                               capped + ", oneDNN " + capped + "\n"),
            std::string::npos)
      << result.output;
}

TEST(CliCpuIsa, BenchRunsAndMeasuresTheCappedMachine) {
  testing::CommandResult result =
      run_capped("avx2", "bench --config tiny --batch 2 --seq 16 --steps 1 --warmup 1 --threads 1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  nlohmann::json line = nlohmann::json::parse(result.output);
  EXPECT_EQ(line["cpu_isa"], name_of(std::min(cpu::detected_cpu_isa(), CpuIsa::avx2)));
  EXPECT_EQ(line["peak_bf16_gflops"], 0.0);  // no bf16 units at the avx2 level
  if (cpu::detected_cpu_isa() >= CpuIsa::avx2) {
    EXPECT_EQ(line["peak_kernel"], "avx2 ymm fma");
  }
}

TEST(CliCpuIsa, UnknownValueIsAnErrorListingTheValues) {
  for (const char* command : {"devices", "bench --config tiny --batch 2 --seq 16 --steps 1"}) {
    testing::CommandResult result = run_capped("avx3", command);
    EXPECT_EQ(result.exit_code, 1) << command << "\n" << result.output;
    EXPECT_NE(result.output.find("[KILN_MAX_CPU_ISA] unknown instruction set 'avx3'; expected one "
                                 "of default, sse41, avx2, avx512_core, avx512_core_bf16, "
                                 "avx512_core_amx"),
              std::string::npos)
        << command << "\n" << result.output;
  }
}

}  // namespace
}  // namespace kiln
