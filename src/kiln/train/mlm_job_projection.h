// The mission's job projected at a measured speed: run_mlm.py training BERT-large on
// WikiText-103 at sequence length 512 for 3 epochs, as `kiln bench --task mlm` prints it.
#pragma once

#include <string>

namespace kiln {

struct MlmJobProjection {
  double tokens = 0.0;           // every epoch's tokens
  double flops_per_token = 0.0;  // the model FLOPs of one trained token
  double flops = 0.0;            // tokens x flops_per_token
  double flops_per_s = 0.0;      // the measured model FLOP/s
  double days = 0.0;             // flops / flops_per_s
};

// WikiText-103's train split (Merity et al., 2016: 103.2M words on 1.80M lines), tokenized by
// BERT's WordPiece with [CLS] and [SEP] on every line and cut into blocks of 512 by run_mlm.py's
// group_texts: about 1.45e8 tokens (about 1.4 pieces a word: the raw text's "@-@" and "@,@"
// separators, numbers and rare words split into several). An estimate, not a count.
constexpr double kWikiText103Tokens = 1.45e8;
constexpr int kMlmJobEpochs = 3;

// The job at `flops_per_token` (for BERT-large MLM at seq 512, `kiln bench`'s count is
// 6 x 303.4M non-embedding parameters + 12 x 24 layers x 512 x 1024 for attention = 1.97e9, so
// 3 x 1.45e8 tokens x 1.97e9 = 8.6e17 FLOP) run at `flops_per_s` (> 0).
MlmJobProjection project_mlm_job(double flops_per_token, double flops_per_s);

// The arithmetic in one line: "3 epochs x 1.45e+08 tokens x 1.97e+09 FLOP/token = 8.58e+17 FLOP
// at 0.5 TFLOP/s = 19.9 days".
std::string mlm_job_projection_text(const MlmJobProjection& projection);

}  // namespace kiln
