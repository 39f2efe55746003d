// The mission's MLM job at a measured speed.
#include "kiln/train/mlm_job_projection.h"

#include <cstdio>

#include "kiln/ir/error.h"

namespace kiln {

MlmJobProjection project_mlm_job(double flops_per_token, double flops_per_s) {
  check(flops_per_s > 0.0, "mlm job projection", "the measured speed ", flops_per_s,
        " FLOP/s is not positive");
  MlmJobProjection projection;
  projection.tokens = kMlmJobEpochs * kWikiText103Tokens;
  projection.flops_per_token = flops_per_token;
  projection.flops = projection.tokens * flops_per_token;
  projection.flops_per_s = flops_per_s;
  projection.days = projection.flops / flops_per_s / 86400.0;
  return projection;
}

std::string mlm_job_projection_text(const MlmJobProjection& projection) {
  char text[200];
  std::snprintf(text, sizeof text,
                "%d epochs x %.3g tokens x %.3g FLOP/token = %.3g FLOP at %.3g TFLOP/s = %.3g days",
                kMlmJobEpochs, kWikiText103Tokens, projection.flops_per_token, projection.flops,
                projection.flops_per_s / 1e12, projection.days);
  return text;
}

}  // namespace kiln
