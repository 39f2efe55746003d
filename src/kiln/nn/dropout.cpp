// DropoutContext: one stream per dropout site, identity in evaluation.
#include "kiln/nn/dropout.h"

#include "kiln/ir/ops.h"

namespace kiln {

DropoutContext DropoutContext::with_inputs(Graph& graph, int64_t batch_size) {
  Value seed = graph.input("dropout_seed", DType::i64, {});
  Value offset = graph.input("dropout_offset", DType::i64, {batch_size});
  return DropoutContext(seed, offset);
}

Value DropoutContext::operator()(Value x, double rate) {
  uint32_t stream = next_stream_++;
  if (!training()) return x;
  return dropout(x, seed_, offset_, rate, stream);
}

AttentionDropout DropoutContext::attention_site(double rate) {
  uint32_t stream = next_stream_++;
  if (!training() || rate == 0.0) return {};
  return {seed_, offset_, rate, stream};
}

}  // namespace kiln
