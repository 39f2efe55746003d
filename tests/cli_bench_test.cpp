// `kiln bench`: one JSON line with bert_torch.py's fields and Kiln's own, from a tiny run on each
// device; bad flags are errors. Values are checked for structure and consistency, never timing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace kiln {
namespace {

using testing::run_kiln;

// The line --bf16 prints on stderr (merged here) on a CPU without bf16 units, or where
// ONEDNN_MAX_CPU_ISA caps them off.
constexpr std::string_view kNoBf16Units = "kiln: this CPU has no bf16 units";

nlohmann::json bench_line(const std::string& flags, const std::string& environment = "") {
  testing::CommandResult result = testing::run_command(
      environment + KILN_BINARY + " bench --config tiny --batch 2 --seq 16 " + flags);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::string output = result.output;
  if (size_t notice = output.find(kNoBf16Units); notice != std::string::npos) {
    output.erase(notice, output.find('\n', notice) + 1 - notice);
  }
  // The JSON line is the whole standard output (compile lines would go to a log, not here).
  EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 1) << result.output;
  return nlohmann::json::parse(output);
}

TEST(CliBench, TinyRunPrintsOneJsonLineWithEveryField) {
  nlohmann::json line = bench_line("--steps 3 --warmup 1 --threads 1 --tag check");
  for (const char* key :
       {"kind", "config", "layers", "hidden", "heads", "intermediate", "batch", "seq", "dtype",
        "threads", "steps", "warmup", "step_s_mean", "step_s_median", "step_s_min", "step_s_max",
        "step_s_stdev", "tokens_per_s", "samples_per_s", "peak_rss_mib", "params",
        "params_nonembedding", "flops_per_step", "gflops_achieved", "cpu_busy_pct",
        "proc_cpu_pct", "proc_sys_s_per_step", "cpu_steal_pct", "loss_first", "loss_last",
        "malloc", "optimizer", "tag", "framework", "device", "step_ms_median",
        "model_flops_per_s", "peak_gflops", "peak_kernel", "peak_fraction", "peak_fp32_gflops",
        "peak_bf16_gflops", "measured_clock_ghz", "cpu_model", "compile_ms", "compiles",
        "cache_hits", "kernels", "arena_bytes", "host_to_device_bytes_per_step",
        "device_to_host_bytes_per_step", "compile_options"}) {
    EXPECT_TRUE(line.contains(key)) << key;
  }
  EXPECT_EQ(line["kind"], "bert_train");
  EXPECT_EQ(line["framework"], "kiln");
  EXPECT_EQ(line["device"], "cpu");
  EXPECT_EQ(line["tag"], "check");
  EXPECT_EQ(line["threads"], 1);
  // bert_torch.py's tiny config: 2 layers, hidden 128, 2 heads, intermediate 512, and the same
  // parameter count as its BertForSequenceClassification.
  EXPECT_EQ(line["layers"], 2);
  EXPECT_EQ(line["hidden"], 128);
  EXPECT_EQ(line["heads"], 2);
  EXPECT_EQ(line["intermediate"], 512);
  const int64_t tables = (30522 + 512 + 2) * 128;
  const int64_t layer = 4 * (128 * 128 + 128) + 2 * 128 * 512 + 512 + 128 + 2 * 2 * 128;
  const int64_t rest = 2 * 128 + (128 * 128 + 128) + (128 * 2 + 2);  // embedding LN, pooler, head
  EXPECT_EQ(line["params"], tables + 2 * layer + rest);
  EXPECT_EQ(line["params_nonembedding"], 2 * layer + rest);
  // bert_torch.py's formula, for batch 2 and sequence 16.
  const double tokens = 2 * 16;
  EXPECT_DOUBLE_EQ(line["flops_per_step"].get<double>(),
                   6.0 * (2 * layer + rest) * tokens + 12.0 * 2 * 16 * 16 * 128 * 2);
  const double median = line["step_s_median"].get<double>();
  EXPECT_GT(median, 0.0);
  EXPECT_DOUBLE_EQ(line["tokens_per_s"].get<double>(), tokens / median);
  EXPECT_DOUBLE_EQ(line["step_ms_median"].get<double>(), median * 1e3);
  EXPECT_DOUBLE_EQ(line["gflops_achieved"].get<double>(),
                   line["flops_per_step"].get<double>() / median / 1e9);
  EXPECT_LE(line["step_s_min"].get<double>(), median);
  EXPECT_GE(line["step_s_max"].get<double>(), median);
  // One training program, found in the cache on each of the other three steps.
  EXPECT_EQ(line["compiles"], 1);
  EXPECT_EQ(line["cache_hits"], 3);
  EXPECT_GT(line["kernels"].get<int64_t>(), 0);
  EXPECT_GT(line["arena_bytes"].get<int64_t>(), 0);
  EXPECT_GT(line["peak_rss_mib"].get<double>(), 0.0);
  const double loss = line["loss_first"].get<double>();
  EXPECT_GT(loss, 0.3);  // about ln 2 for two classes at initialisation
  EXPECT_LT(loss, 1.2);
  // The peak fraction is the achieved rate over the measured peak, when the CPU has FMA.
  if (line["peak_gflops"].get<double>() > 0) {
    EXPECT_DOUBLE_EQ(line["peak_fraction"].get<double>(),
                     line["gflops_achieved"].get<double>() / line["peak_gflops"].get<double>());
    EXPECT_FALSE(line["peak_kernel"].get<std::string>().empty());
  }
}

TEST(CliBench, RunsOnTheReferenceBackendAndAsksForBf16) {
  nlohmann::json reference = bench_line("--steps 1 --warmup 0 --device reference");
  EXPECT_EQ(reference["device"], "reference");
  EXPECT_EQ(reference["cache_hits"], 0);
  nlohmann::json bf16 = bench_line("--steps 1 --warmup 1 --dtype bf16");
  EXPECT_EQ(bf16["dtype"], "bf16");
  EXPECT_NE(bf16["compile_options"].get<std::string>().find("bf16"), std::string::npos);
}

TEST(CliBench, BadFlagsAreErrors) {
  testing::CommandResult result = run_kiln("bench --config huge");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("--config"), std::string::npos) << result.output;
  result = run_kiln("bench --config tiny --dtype fp16");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("--dtype"), std::string::npos) << result.output;
  result = run_kiln("bench --config tiny --seq 600 --steps 1");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("[--seq] 600 is longer than the model's max_position_embeddings 512"),
            std::string::npos)
      << result.output;
  result = run_kiln("bench --config tiny --steps 0");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("--steps"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace kiln
