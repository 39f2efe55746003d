// Shared by the GPT-2 tests: the fixture folders written by
// tests/fixtures_gen/make_gpt2_fixtures.py (tests/data/gpt2/<name>/).
#pragma once

#include <string>

#include "bert_test_util.h"
#include "kiln/models/gpt2_config.h"

namespace kiln::testing {

using Gpt2Fixture = ModelFixture<Gpt2Config>;

inline Gpt2Fixture load_gpt2_fixture(const std::string& name) {
  return load_model_fixture(std::string(KILN_SOURCE_DIR) + "/tests/data/gpt2/" + name,
                            gpt2_config_read);
}

}  // namespace kiln::testing
