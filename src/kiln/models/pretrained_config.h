// What every model family's config holds besides its sizes, as transformers' PretrainedConfig:
// the labels, the loss, the architectures and the keys Kiln does not interpret. Each family's
// config (BertConfig, ...) derives from it, so that tasks and the Trainer treat families alike.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct PretrainedConfig {
  explicit PretrainedConfig(std::string type) : model_type(std::move(type)) {}
  virtual ~PretrainedConfig() = default;
  // A copy of the whole config, the family's fields included.
  virtual std::unique_ptr<PretrainedConfig> clone() const = 0;

  // null, "regression", "single_label_classification" or "multi_label_classification".
  std::optional<std::string> problem_type;
  // Class names by id; num_labels is its size. config.json stores it as {"0": name, ...} and
  // its inverse as label2id. Hugging Face's default is two classes, LABEL_0 and LABEL_1.
  std::vector<std::string> id2label = {"LABEL_0", "LABEL_1"};
  std::vector<std::string> architectures;  // e.g. {"BertForSequenceClassification"}
  std::string model_type;                  // the family: "bert", ...
  std::optional<std::string> torch_dtype;  // "float32", "bfloat16", ... ("dtype" in transformers 5)
  // Keys Kiln does not interpret (use_cache, transformers_version, ...) as JSON text, written
  // back unchanged: rewriting a config loses nothing.
  std::map<std::string, std::string> extra;

  int64_t num_labels() const { return static_cast<int64_t>(id2label.size()); }
  // Replaces id2label by LABEL_0 .. LABEL_{n-1}, as transformers does for num_labels=n.
  void set_num_labels(int64_t count);

  bool operator==(const PretrainedConfig&) const = default;

 protected:
  PretrainedConfig(const PretrainedConfig&) = default;
  PretrainedConfig& operator=(const PretrainedConfig&) = default;
};

// HF's choice of loss for a classification head: problem_type when set, else "regression" for
// one label, else single- or multi-label classification by the labels' dtype.
std::string classification_problem_type(const std::optional<std::string>& problem_type,
                                        int64_t num_labels, bool integer_labels);
// The same for a config's problem_type and labels.
std::string problem_type_for(const PretrainedConfig& config, bool integer_labels);

}  // namespace kiln
