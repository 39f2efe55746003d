// `kiln bench`: one JSON line with bert_torch.py's fields and Kiln's own, from a tiny run on each
// device; bad flags are errors. Values are checked for structure and consistency, never timing.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "kiln/backends/cpu/bf16_products.h"
#include "kiln/io/mlm_collate.h"
#include "kiln/train/mlm_job_projection.h"

namespace kiln {
namespace {

using testing::run_kiln;

// The end of the line --bf16 prints on stderr (merged here) on a CPU without bf16 units or with
// slow ones, or where ONEDNN_MAX_CPU_ISA caps them off.
constexpr std::string_view kBf16Rounding = "; --bf16 rounds to bf16 and multiplies in fp32\n";

nlohmann::json bench_line(const std::string& flags, const std::string& environment = "") {
  testing::CommandResult result = testing::run_command(
      environment + KILN_BINARY + " bench --config tiny --batch 2 --seq 16 " + flags);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::string output = result.output;
  if (size_t notice = output.find(kBf16Rounding); notice != std::string::npos) {
    size_t line = output.rfind('\n', notice);
    line = line == std::string::npos ? 0 : line + 1;
    output.erase(line, notice + kBf16Rounding.size() - line);
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
        "peak_bf16_gflops", "bf16_products_native", "measured_clock_ghz", "cpu_model", "cpu_isa",
        "compile_ms", "compiles",
        "cache_hits", "kernels", "compiled_loops", "arena_bytes", "host_to_device_bytes_per_step",
        "device_to_host_bytes_per_step", "compile_options", "peak_rss_minus_16b_per_param_mib",
        "planned_peak_bytes", "planned_fixed_bytes", "planned_activation_bytes",
        "gradient_checkpointing"}) {
    EXPECT_TRUE(line.contains(key)) << key;
  }
  EXPECT_EQ(line["kind"], "bert_train");
  EXPECT_EQ(line["framework"], "kiln");
  EXPECT_EQ(line["task"], "classification");
  EXPECT_FALSE(line.contains("projected"));
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
  // One training program, compiled for the memory plan before the first step and found in the
  // cache on each of the four steps.
  EXPECT_EQ(line["compiles"], 1);
  EXPECT_EQ(line["cache_hits"], 4);
  EXPECT_GT(line["kernels"].get<int64_t>(), 0);
  // With AVX2 the AdamW updates (32 loops) run as machine code (loop_code.h).
  if (line["cpu_isa"] == "sse41") {
    EXPECT_EQ(line["compiled_loops"], 0);
  } else {
    EXPECT_GE(line["compiled_loops"].get<int64_t>(), 32);
  }
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

// run_mlm.py's step: BertForMaskedLM (no pooler; transform, LayerNorm, the decoder tied to the
// word embeddings with its own bias) on a masked batch, with the job projected at its speed.
TEST(CliBench, MlmTaskTrainsTheMaskedLmHeadAndProjectsTheJob) {
  nlohmann::json line = bench_line("--task mlm --steps 1 --warmup 0 --threads 1");
  EXPECT_EQ(line["task"], "mlm");
  // 2 rows of [CLS], 14 maskable tokens, [SEP]: the head's rows are the capacity the Trainer
  // gives a 2 x 16 batch, of which the chosen tokens are a part.
  EXPECT_EQ(line["mlm_predictions"], mlm_prediction_capacity(2 * 16, 0.15));
  EXPECT_GT(line["masked_tokens"].get<int64_t>(), 0);
  EXPECT_LE(line["masked_tokens"].get<int64_t>(), 2 * 14);
  // No pooler or classifier; the tied decoder has no weight of its own, only its bias.
  const int64_t tables = (30522 + 512 + 2) * 128;
  const int64_t layer = 4 * (128 * 128 + 128) + 2 * 128 * 512 + 512 + 128 + 2 * 2 * 128;
  const int64_t head = (128 * 128 + 128) + 2 * 128 + 30522;  // transform, LayerNorm, bias
  const int64_t nonembedding = 2 * 128 + 2 * layer + head;
  EXPECT_EQ(line["params"], tables + nonembedding);
  EXPECT_EQ(line["params_nonembedding"], nonembedding);
  const double tokens = 2 * 16;
  const double flops = 6.0 * nonembedding * tokens + 12.0 * 2 * 16 * 16 * 128 * 2;
  EXPECT_DOUBLE_EQ(line["flops_per_step"].get<double>(), flops);
  // At initialisation the logits over the vocabulary are nearly equal: the loss is about ln V.
  const double loss = line["loss_first"].get<double>();
  EXPECT_NEAR(loss, std::log(30522.0), 1.0);
  // The job: 3 epochs of WikiText-103 at this model's FLOP per token and this run's speed.
  const double job_flops = 3 * kWikiText103Tokens * flops / tokens;
  EXPECT_DOUBLE_EQ(line["projected_mlm_job_flops"].get<double>(), job_flops);
  EXPECT_DOUBLE_EQ(line["projected_mlm_job_days"].get<double>(),
                   job_flops / line["model_flops_per_s"].get<double>() / 86400.0);
  EXPECT_EQ(line["projected"].get<std::string>().rfind("3 epochs x 1.45e+08 tokens x ", 0), 0u)
      << line["projected"];
}

// The planned memory: weights, gradients and AdamW's two moments (16 B per parameter) plus the
// activations, which --gradient_checkpointing shrinks; the measured peak RSS beside it.
TEST(CliBench, ReportsPlannedMemoryAndCheckpointsOnRequest) {
  nlohmann::json plain = bench_line("--steps 1 --warmup 0");
  nlohmann::json checkpointed = bench_line("--steps 1 --warmup 0 --gradient_checkpointing");
  const int64_t params = plain["params"].get<int64_t>();
  for (const nlohmann::json& line : {plain, checkpointed}) {
    EXPECT_EQ(line["planned_fixed_bytes"].get<int64_t>(), 16 * params);
    EXPECT_EQ(line["planned_peak_bytes"].get<int64_t>(),
              line["planned_fixed_bytes"].get<int64_t>() +
                  line["planned_activation_bytes"].get<int64_t>());
    EXPECT_DOUBLE_EQ(line["peak_rss_minus_16b_per_param_mib"].get<double>(),
                     line["peak_rss_mib"].get<double>() - 16.0 * params / (1024.0 * 1024.0));
  }
  EXPECT_EQ(plain["gradient_checkpointing"], false);
  EXPECT_EQ(checkpointed["gradient_checkpointing"], true);
  EXPECT_NE(checkpointed["compile_options"].get<std::string>().find("checkpoint"),
            std::string::npos);
  // At 2 x 16 tokens the arena peaks at the optimizer, over the embedding table's gradients:
  // checkpointing cannot lower it here (gradient_checkpointing_test measures what it frees).
  EXPECT_LE(checkpointed["planned_activation_bytes"].get<int64_t>(),
            plain["planned_activation_bytes"].get<int64_t>());
  // Equal but for the rounding of a GELU fused otherwise (see gradient_checkpointing_test).
  EXPECT_NEAR(checkpointed["loss_first"].get<double>(), plain["loss_first"].get<double>(),
              1e-6 * plain["loss_first"].get<double>());
}

TEST(CliBench, RunsOnTheReferenceBackendAndAsksForBf16) {
  nlohmann::json reference = bench_line("--steps 1 --warmup 0 --device reference");
  EXPECT_EQ(reference["device"], "reference");
  EXPECT_EQ(reference["cache_hits"], 1);
  nlohmann::json bf16 = bench_line("--steps 1 --warmup 1 --dtype bf16");
  EXPECT_EQ(bf16["dtype"], "bf16");
  EXPECT_NE(bf16["compile_options"].get<std::string>().find("bf16"), std::string::npos);
  EXPECT_EQ(bf16["bf16_products_native"], cpu::cpu_has_bf16_products());
  EXPECT_EQ(reference["bf16_products_native"], false);  // an fp32 run
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
  result = run_kiln("bench --config tiny --task ner");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("--task"), std::string::npos) << result.output;
  result = run_kiln("bench --config tiny --task mlm --seq 2 --steps 1");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("[--seq] 2 leaves no token to mask"), std::string::npos)
      << result.output;
  result = run_kiln("bench --config tiny --steps 0");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("--steps"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace kiln
