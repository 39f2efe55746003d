// --bf16 on a CPU without bf16 units, as ONEDNN_MAX_CPU_ISA makes any CPU look: a training run
// that compiles a training and an evaluation program says once that it rounds to bf16 and
// multiplies in fp32, and naming the instruction set; a run that does not ask for bf16 says
// nothing. At the AVX512-BF16 level it multiplies in bf16 only where vdpbf16ps beats the FMAs
// (AMD's cores), and says so, with both units' rates, where it does not.
#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "kiln/backends/cpu/bf16_products.h"
#include "kiln/backends/cpu/cpu_isa.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kNotice = "kiln: this CPU has no bf16 units (";

// kiln train, capped at `isa`, for one step on a tiny model, evaluating before and after it.
testing::CommandResult train_capped(const std::string& isa, const std::string& flags) {
  fs::path dir = testing::scratch_folder();
  std::string model = testing::write_tiny_model_files(dir / "model");
  fs::path data = testing::write_sentiment_tsv(dir / "data.tsv", 16, 7);
  return testing::run_command(
      "ONEDNN_MAX_CPU_ISA=" + isa + " " + KILN_BINARY + " train " + model + " " +
      testing::quick_run_flags(dir / "out") + " --train_file " + data.string() +
      " --validation_file " + data.string() +
      " --do_eval --eval_on_start --max_steps 1 --save_strategy no --report_to none" + flags);
}

size_t count(const std::string& text, std::string_view part) {
  size_t found = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++found;
  }
  return found;
}

TEST(CliBf16, WithoutBf16UnitsABf16RunSaysSoOnce) {
  for (const std::string isa : {"AVX2", "AVX512_CORE"}) {
    SCOPED_TRACE(isa);
    testing::CommandResult run = train_capped(isa, " --bf16");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(count(run.output, kNotice), 1) << run.output;
    std::string named = std::string(kNotice) + (isa == "AVX2" ? "avx2" : "avx512_core") +
                        "); --bf16 rounds to bf16 and multiplies in fp32\n";
    EXPECT_NE(run.output.find(named), std::string::npos) << run.output;
  }
  testing::CommandResult f32 = train_capped("AVX2", "");
  ASSERT_EQ(f32.exit_code, 0) << f32.output;
  EXPECT_EQ(count(f32.output, kNotice), 0) << f32.output;
}

TEST(CliBf16, SlowBf16UnitsSaySoOnceWithTheirRates) {
  if (cpu::detected_cpu_isa() < cpu::CpuIsa::avx512_core_bf16) {
    GTEST_SKIP() << "this CPU has no AVX512_BF16";
  }
  testing::CommandResult run = train_capped("AVX512_CORE_BF16", " --bf16");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  constexpr std::string_view kSlow =
      "kiln: this CPU's bf16 units are slow (avx512_core_bf16: vdpbf16ps ";
  bool pays = cpu::vdpbf16ps_pays(cpu::detected_cpu_features());
  EXPECT_EQ(count(run.output, kSlow), pays ? 0 : 1) << run.output;
  EXPECT_EQ(count(run.output, kNotice), 0) << run.output;
}

}  // namespace
}  // namespace kiln
