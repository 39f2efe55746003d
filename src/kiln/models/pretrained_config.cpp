// The label helpers every family's config shares.
#include "kiln/models/pretrained_config.h"

#include <fstream>
#include <sstream>

#include "kiln/ir/error.h"

namespace kiln {

void PretrainedConfig::set_num_labels(int64_t count) {
  check(count >= 1, "config", "num_labels must be at least 1, got ", count);
  id2label.clear();
  for (int64_t i = 0; i < count; ++i) id2label.push_back("LABEL_" + std::to_string(i));
}

std::string problem_type_for(const PretrainedConfig& config, bool integer_labels) {
  if (config.problem_type) return *config.problem_type;
  if (config.num_labels() == 1) return "regression";
  return integer_labels ? "single_label_classification" : "multi_label_classification";
}

std::string config_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open config");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail(path, "cannot read config");
  return text.str();
}

}  // namespace kiln
