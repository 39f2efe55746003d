// Shared by the DistilBERT tests: the fixture folders written by
// tests/fixtures_gen/make_distilbert_fixtures.py (tests/data/distilbert/<name>/).
#pragma once

#include <string>

#include "bert_test_util.h"
#include "kiln/models/distilbert_config.h"

namespace kiln::testing {

using DistilBertFixture = ModelFixture<DistilBertConfig>;

inline DistilBertFixture load_distilbert_fixture(const std::string& name) {
  return load_model_fixture(std::string(KILN_SOURCE_DIR) + "/tests/data/distilbert/" + name,
                            distilbert_config_read);
}

}  // namespace kiln::testing
