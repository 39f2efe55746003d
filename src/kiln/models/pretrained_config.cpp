// The label helpers every family's config shares.
#include "kiln/models/pretrained_config.h"

#include "kiln/io/config_fields.h"

namespace kiln {

void PretrainedConfig::set_num_labels(int64_t count) { id2label = config_default_labels(count); }

std::string classification_problem_type(const std::optional<std::string>& problem_type,
                                        int64_t num_labels, bool integer_labels) {
  if (problem_type) return *problem_type;
  if (num_labels == 1) return "regression";
  return integer_labels ? "single_label_classification" : "multi_label_classification";
}

std::string problem_type_for(const PretrainedConfig& config, bool integer_labels) {
  return classification_problem_type(config.problem_type, config.num_labels(), integer_labels);
}

}  // namespace kiln
