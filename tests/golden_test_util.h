// Shared by the golden tests of the model families' heads (bert_heads_test,
// distilbert_heads_test, roberta_heads_test, electra_heads_test): a head's outputs, loss and
// every parameter gradient on a backend (the reference unless said otherwise) against what
// transformers computed (expected.safetensors of a ModelFixture).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bert_test_util.h"
#include "kiln/autodiff/grad.h"
#include "kiln/backends/reference/reference_backend.h"
#include "support/testing.h"

namespace kiln::testing {

inline double max_abs(const Tensor& t) {
  double out = 0.0;
  for (int64_t i = 0; i < t.numel(); ++i) out = std::max(out, std::fabs(t.get(i)));
  return out;
}

// The tolerance of a tensor named `name` in `expected`: 1e-5 of its scale. A bias is measured
// against its module's weight gradient too (for a key bias, the query's), since some biases have
// an exact gradient of zero: the key biases, and biases that shift every logit of a softmax
// alike (QA's qa_outputs, the LayerNorm before it).
inline double golden_tolerance(const std::map<std::string, Tensor>& expected,
                               const std::string& name) {
  double scale = max_abs(expected.at(name));
  if (name.ends_with(".bias")) {
    std::string weight = name.substr(0, name.size() - 5) + ".weight";
    for (auto [key, query] :
         {std::pair{"self.key.", "self.query."}, std::pair{"k_lin.", "q_lin."}}) {
      if (size_t at = weight.find(key); at != std::string::npos) {
        weight.replace(at, std::string_view(key).size(), query);
      }
    }
    if (expected.contains(weight)) scale = std::max(scale, max_abs(expected.at(weight)));
  }
  return 1e-5 * scale;
}

// Computes a graph's outputs from its arguments on some backend.
using Evaluate = std::function<std::vector<Tensor>(const Graph& graph,
                                                   const std::vector<Value>& outputs,
                                                   const std::vector<Tensor>& arguments)>;

// Evaluates `outputs` (named as in `expected`) and the loss's gradient for every parameter of
// `params` (values loaded) with `evaluate`, and compares each with transformers'. In the
// embeddings named in `pad_row_params`, row `pad_id` is compared apart: torch zeroes its gradient
// and the IR cannot (see nn/layers.h), so it must be zero in `expected` and is not compared.
inline void expect_outputs_and_gradients_match(
    const std::map<std::string, Tensor>& expected, ParameterSet& params, Value loss,
    std::vector<Value> outputs, std::vector<std::string> names,
    const std::map<std::string, Tensor>& feeds, const std::vector<std::string>& pad_row_params,
    int64_t pad_id, const Evaluate& evaluate) {
  std::vector<Value> grads = grad(loss, params.values());
  outputs.push_back(loss);
  names.push_back("loss");
  for (size_t i = 0; i < grads.size(); ++i) {
    outputs.push_back(grads[i]);
    names.push_back("grad." + params.parameters()[i].name);
  }
  std::vector<Tensor> results = evaluate(params.graph(), outputs, params.arguments(feeds));
  ASSERT_EQ(results.size(), names.size());
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(expected.contains(names[i])) << names[i];
    const Tensor& want = expected.at(names[i]);
    Tensor actual = results[i];
    for (const std::string& pad_row_param : pad_row_params) {
      if (names[i] != "grad." + pad_row_param) continue;
      const int64_t width = actual.shape()[1];
      for (int64_t j = 0; j < width; ++j) {
        EXPECT_EQ(want.get(pad_id * width + j), 0.0) << names[i];
        actual.set(pad_id * width + j, 0.0);
      }
    }
    std::string mismatch =
        compare_tensors(actual, want, 0.0, golden_tolerance(expected, names[i]));
    EXPECT_TRUE(mismatch.empty()) << names[i] << ": " << mismatch;
  }
}

// Loads the fixture's weights into `params` with `load_weights` (a family's *_load_weights),
// checks HF's parameter names and order, and compares with transformers as above, evaluated by
// `evaluate`; the padding rows of the embeddings in `pad_row_params` apart.
template <typename Config>
void expect_head_matches_transformers(
    const ModelFixture<Config>& fixture, ParameterSet& params,
    LoadReport (*load_weights)(ParameterSet&, const std::string&, bool), Value loss,
    std::vector<Value> outputs, std::vector<std::string> names,
    const std::vector<std::string>& pad_row_params,
    const std::map<std::string, Tensor>& extra_feeds = {},
    const Evaluate& evaluate = evaluate_reference) {
  EXPECT_EQ(params.names(), fixture.parameter_order);
  load_weights(params, fixture.dir, /*strict=*/true);
  std::map<std::string, Tensor> feeds = fixture.feeds();
  feeds.insert(extra_feeds.begin(), extra_feeds.end());
  expect_outputs_and_gradients_match(fixture.expected, params, loss, std::move(outputs),
                                     std::move(names), feeds, pad_row_params,
                                     fixture.config.pad_token_id.value_or(0), evaluate);
}

// The same on the reference backend, the padding row of `pad_row_param` (an embedding) apart,
// when given.
template <typename Config>
void expect_matches_transformers(
    const ModelFixture<Config>& fixture, ParameterSet& params,
    LoadReport (*load_weights)(ParameterSet&, const std::string&, bool), Value loss,
    std::vector<Value> outputs, std::vector<std::string> names,
    const std::string& pad_row_param = "", const std::map<std::string, Tensor>& extra_feeds = {}) {
  std::vector<std::string> pad_row_params;
  if (!pad_row_param.empty()) pad_row_params.push_back(pad_row_param);
  expect_head_matches_transformers(fixture, params, load_weights, loss, std::move(outputs),
                                   std::move(names), pad_row_params, extra_feeds);
}

}  // namespace kiln::testing
