// Linear, Conv1D, Embedding and LayerNorm: parameters registered by HF name, forward as graph ops.
#include "kiln/nn/layers.h"

#include "kiln/ir/ops.h"

namespace kiln {

Linear Linear::create(ParameterSet& params, const std::string& prefix, int64_t in, int64_t out,
                      double init_std, bool with_bias) {
  Linear layer;
  layer.weight = params.add(prefix + ".weight", {out, in}, ParameterInit::normal(init_std),
                            /*decay=*/true);
  if (with_bias) {
    layer.bias = params.add(prefix + ".bias", {out}, ParameterInit::zeros(), /*decay=*/false);
  }
  return layer;
}

Value Linear::operator()(Value x) const {
  DotAttrs dims;
  dims.lhs_contract = {x.rank() - 1};
  dims.rhs_contract = {1};
  Value y = dot_general(x, weight, dims);
  return bias.valid() ? y + bias : y;
}

Conv1D Conv1D::create(ParameterSet& params, const std::string& prefix, int64_t in, int64_t out,
                      double init_std) {
  Conv1D layer;
  layer.weight = params.add(prefix + ".weight", {in, out}, ParameterInit::normal(init_std),
                            /*decay=*/true);
  layer.bias = params.add(prefix + ".bias", {out}, ParameterInit::zeros(), /*decay=*/false);
  return layer;
}

Value Conv1D::operator()(Value x) const {
  DotAttrs dims;
  dims.lhs_contract = {x.rank() - 1};
  dims.rhs_contract = {0};
  return dot_general(x, weight, dims) + bias;
}

Embedding Embedding::create(ParameterSet& params, const std::string& prefix, int64_t count,
                            int64_t dim, double init_std, std::optional<int64_t> padding_idx) {
  Embedding layer;
  layer.weight = params.add(prefix + ".weight", {count, dim},
                            ParameterInit::normal(init_std, padding_idx), /*decay=*/true);
  return layer;
}

Value Embedding::operator()(Value ids) const { return gather(weight, ids, 0); }

LayerNorm LayerNorm::create(ParameterSet& params, const std::string& prefix, int64_t dim,
                            double eps) {
  LayerNorm layer;
  layer.weight = params.add(prefix + ".weight", {dim}, ParameterInit::ones(), false);
  layer.bias = params.add(prefix + ".bias", {dim}, ParameterInit::zeros(), false);
  layer.eps = eps;
  return layer;
}

Value LayerNorm::operator()(Value x) const { return layer_norm(x, weight, bias, eps); }

}  // namespace kiln
