// save_metrics: train_results.json / eval_results.json / all_results.json.
#include "kiln/train/results_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/io/atomic_file.h"
#include "kiln/ir/error.h"
#include "kiln/train/log_python_json.h"

namespace kiln {

void save_metrics(const std::string& output_dir, const std::string& split,
                  const nlohmann::json& metrics, bool combined) {
  std::filesystem::path folder(output_dir);
  std::string path = (folder / (split + "_results.json")).string();
  check(metrics.is_object(), path, "metrics must be a JSON object, got ", metrics.type_name());
  write_file_atomically(path, python_json_dumps(metrics, 4));
  if (!combined) return;

  std::string all_path = (folder / "all_results.json").string();
  nlohmann::json all = nlohmann::json::object();
  if (std::filesystem::exists(all_path)) {
    std::ifstream in(all_path, std::ios::binary);
    check(in.good(), all_path, "cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    all = python_json_loads(text.str(), all_path);
    check(all.is_object(), all_path, "must hold a JSON object, got ", all.type_name());
  }
  all.update(metrics);
  write_file_atomically(all_path, python_json_dumps(all, 4));
}

}  // namespace kiln
