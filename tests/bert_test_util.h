// Shared by the bert_*_test files (and other families' golden tests): the fixture folders written
// by tests/fixtures_gen/make_bert_fixtures.py and its kind (config.json, model.safetensors,
// expected.safetensors).
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/io/safetensors.h"
#include "kiln/models/bert.h"

namespace kiln::testing {

inline const std::vector<std::string> kBertFixtures = {"tiny", "odd_heads", "regression",
                                                       "multi_label"};

inline std::string bert_fixture_dir(const std::string& name) {
  return std::string(KILN_SOURCE_DIR) + "/tests/data/bert/" + name;
}

// A golden fixture folder of any family: its config, expected.safetensors, HF's parameter order
// and the build options of its fixed batch.
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

// Reads <dir>/config.json with `read_config` and <dir>/expected.safetensors.
template <typename Config>
ModelFixture<Config> load_model_fixture(const std::string& dir,
                                        Config (*read_config)(const std::string&)) {
  ModelFixture<Config> fixture;
  fixture.dir = dir;
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

using BertFixture = ModelFixture<BertConfig>;

inline BertFixture load_bert_fixture(const std::string& name) {
  return load_model_fixture(bert_fixture_dir(name), bert_config_read);
}

}  // namespace kiln::testing
