// Shared by the tests of BERT and the encoder families built on it: the fixture folders written by
// tests/fixtures_gen/make_bert_fixtures.py and make_encoder_family_fixtures.py (config.json,
// model.safetensors, expected.safetensors), and the comparison of a model's outputs, loss and
// gradients with transformers'.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/autodiff/grad.h"
#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/safetensors.h"
#include "kiln/models/bert.h"
#include "support/testing.h"

namespace kiln::testing {

inline const std::vector<std::string> kBertFixtures = {"tiny", "odd_heads", "regression",
                                                       "multi_label"};

inline std::string bert_fixture_dir(const std::string& name) {
  return std::string(KILN_SOURCE_DIR) + "/tests/data/bert/" + name;
}

template <typename Config>
struct ModelFixture {
  std::string dir;
  Config config;
  std::map<std::string, Tensor> expected;    // every tensor of expected.safetensors
  std::vector<std::string> parameter_order;  // HF's named_parameters() order
  BertBuildOptions options;                  // batch and length of the fixed batch

  // The batch as graph feeds by input name (labels, or the QA head's positions).
  std::map<std::string, Tensor> feeds() const {
    std::map<std::string, Tensor> out;
    for (const char* name : {"input_ids", "token_type_ids", "attention_mask", "labels",
                             "start_positions", "end_positions"}) {
      if (expected.contains(name)) out[name] = expected.at(name);
    }
    return out;
  }
};

using BertFixture = ModelFixture<BertConfig>;

// The fixture in `dir` (absolute, or relative to tests/data/), its config read by `read_config`.
template <typename Config>
ModelFixture<Config> load_model_fixture(const std::string& dir,
                                        Config (*read_config)(const std::string&)) {
  ModelFixture<Config> fixture;
  fixture.dir = dir.starts_with("/") ? dir : std::string(KILN_SOURCE_DIR) + "/tests/data/" + dir;
  fixture.config = read_config(fixture.dir + "/config.json");
  SafetensorsFile file(fixture.dir + "/expected.safetensors");
  for (const std::string& tensor : file.names()) fixture.expected[tensor] = file.to_tensor(tensor);
  std::stringstream order(file.metadata().at("parameter_order"));
  for (std::string param; std::getline(order, param, ',');)
    fixture.parameter_order.push_back(param);
  const Tensor& ids = fixture.expected.at("input_ids");
  fixture.options.batch_size = ids.shape()[0];
  fixture.options.seq_len = ids.shape()[1];
  fixture.options.index_dtype = ids.dtype();
  if (fixture.expected.contains("labels")) {
    fixture.options.integer_labels = is_integer(fixture.expected.at("labels").dtype());
  }
  return fixture;
}

inline BertFixture load_bert_fixture(const std::string& name) {
  return load_model_fixture(bert_fixture_dir(name), bert_config_read);
}

inline double max_abs(const Tensor& t) {
  double out = 0.0;
  for (int64_t i = 0; i < t.numel(); ++i) out = std::max(out, std::fabs(t.get(i)));
  return out;
}

// Loads the fixture's checkpoint into `params` (bert_load_weights and its family twins).
using LoadWeights = LoadReport (*)(ParameterSet& params, const std::string& path, bool strict);

// Computes a graph's outputs from its arguments on some backend (default: the reference).
using Evaluate = std::function<std::vector<Tensor>(const Graph& graph,
                                                   const std::vector<Value>& outputs,
                                                   const std::vector<Tensor>& arguments)>;

// Loads the fixture's weights with `load`, evaluates `outputs` (named as in expected.safetensors)
// and the loss's gradient for every parameter (on the reference backend unless `evaluate` says
// otherwise), and compares each with transformers' to 1e-5 of the tensor's scale. A bias is
// measured against its module's weight gradient too, since some biases have an exact gradient of zero (the key biases; qa_outputs.bias
// and the last LayerNorm's bias in the QA head, which shift every position's logit alike).
// torch zeroes the gradient of an embedding's padding row and the IR has no stop-gradient (see
// nn/layers.h), so in the gradients named in `pad_rows_apart` (for heads whose loss sees the
// outputs of padding positions) the pad_token_id row is compared apart: zero in torch, whatever
// the padding positions contribute in Kiln.
template <typename Config>
void expect_matches_transformers(const ModelFixture<Config>& fixture, ParameterSet& params,
                                 Value loss, std::vector<Value> outputs,
                                 std::vector<std::string> names, LoadWeights load,
                                 const std::vector<std::string>& pad_rows_apart = {},
                                 const std::map<std::string, Tensor>& extra_feeds = {},
                                 const Evaluate& evaluate = evaluate_reference) {
  EXPECT_EQ(params.names(), fixture.parameter_order);
  load(params, fixture.dir, /*strict=*/true);
  std::vector<Value> grads = grad(loss, params.values());
  outputs.push_back(loss);
  names.push_back("loss");
  for (size_t i = 0; i < grads.size(); ++i) {
    outputs.push_back(grads[i]);
    names.push_back("grad." + params.parameters()[i].name);
  }
  std::map<std::string, Tensor> feeds = fixture.feeds();
  feeds.insert(extra_feeds.begin(), extra_feeds.end());
  std::vector<Tensor> results = evaluate(params.graph(), outputs, params.arguments(feeds));
  ASSERT_EQ(results.size(), names.size());
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor expected = fixture.expected.at(names[i]);
    double scale = max_abs(expected);
    if (names[i].ends_with(".bias")) {
      std::string weight = names[i].substr(0, names[i].size() - 5) + ".weight";
      if (size_t at = weight.find("self.key."); at != std::string::npos) {
        weight.replace(at, 9, "self.query.");
      }
      if (fixture.expected.contains(weight)) {
        scale = std::max(scale, max_abs(fixture.expected.at(weight)));
      }
    }
    Tensor actual = results[i];
    if (std::find(pad_rows_apart.begin(), pad_rows_apart.end(), names[i]) !=
        pad_rows_apart.end()) {
      const int64_t pad = fixture.config.pad_token_id.value_or(0), width = actual.shape()[1];
      for (int64_t j = 0; j < width; ++j) {
        EXPECT_EQ(expected.get(pad * width + j), 0.0) << names[i];
        actual.set(pad * width + j, 0.0);
      }
    }
    std::string mismatch = compare_tensors(actual, expected, 0.0, 1e-5 * scale);
    EXPECT_TRUE(mismatch.empty()) << names[i] << ": " << mismatch;
  }
}

}  // namespace kiln::testing
