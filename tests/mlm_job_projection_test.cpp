// The mission's job (run_mlm.py, BERT-large, WikiText-103 at seq 512, 3 epochs) projected at a
// speed: its FLOPs from `kiln bench`'s count for BERT-large MLM, and the days at a given rate.
#include <gtest/gtest.h>

#include "kiln/ir/error.h"
#include "kiln/train/mlm_job_projection.h"

namespace kiln {
namespace {

// bert_torch.py's FLOPs per token, as `kiln bench` counts them, for BertForMaskedLM-large at
// seq 512: 6 x non-embedding parameters + 12 x layers x seq x hidden for attention.
double bert_large_mlm_flops_per_token() {
  const double h = 1024, i = 4096, layers = 24, vocab = 30522, seq = 512;
  const double layer = 4 * (h * h + h) + 2 * h * i + i + h + 2 * 2 * h;
  const double head = (h * h + h) + 2 * h + vocab;  // transform, its LayerNorm, decoder bias
  const double nonembedding = 2 * h + layers * layer + head;
  EXPECT_EQ(nonembedding, 303393594.0);
  return 6 * nonembedding + 12 * layers * seq * h;
}

TEST(MlmJobProjection, TheSeedJobIsAbout8Point6e17Flop) {
  const MlmJobProjection job = project_mlm_job(bert_large_mlm_flops_per_token(), 1e12);
  EXPECT_DOUBLE_EQ(job.tokens, 3 * 1.45e8);
  EXPECT_DOUBLE_EQ(job.flops, 3 * 1.45e8 * bert_large_mlm_flops_per_token());
  EXPECT_NEAR(job.flops, 8.6e17, 0.05e17);
  // 8.58e17 FLOP at 1 TFLOP/s: 8.58e5 s, 9.93 days.
  EXPECT_DOUBLE_EQ(job.days, job.flops / 1e12 / 86400.0);
  EXPECT_NEAR(job.days, 9.93, 0.01);
}

TEST(MlmJobProjection, TextShowsTheArithmetic) {
  const MlmJobProjection job = project_mlm_job(bert_large_mlm_flops_per_token(), 0.5e12);
  EXPECT_EQ(mlm_job_projection_text(job),
            "3 epochs x 1.45e+08 tokens x 1.97e+09 FLOP/token = 8.58e+17 FLOP at 0.5 TFLOP/s "
            "= 19.9 days");
}

TEST(MlmJobProjection, NeedsAPositiveSpeed) {
  EXPECT_THROW(project_mlm_job(1e9, 0.0), Error);
}

}  // namespace
}  // namespace kiln
