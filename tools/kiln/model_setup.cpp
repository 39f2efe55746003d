// The model of a run: tokenizer and config from an HF folder or a named config, then weights
// loaded by state-dict name (reported as transformers does) or initialised from the seed.
#include <algorithm>
#include <array>
#include <filesystem>

#include "kiln/io/tokenizer_files.h"
#include "kiln/ir/error.h"
#include "kiln/ir/usage_error.h"
#include "kiln/models/bert.h"
#include "kiln/train/task.h"
#include "kiln/models/bert_pretrained.h"
#include "setup.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 6> kPresets = {"tiny",   "mini", "small",
                                                      "medium", "base", "large"};

// A tokenizer folder, a vocab.txt or a tokenizer.json.
Tokenizer load_tokenizer(const std::string& source, const char* flag) {
  check(fs::exists(source), flag, "no such file or folder: ", source);
  if (fs::is_directory(source)) return tokenizer_load(source);
  if (source.ends_with(".json")) return tokenizer_load_json(source);
  return tokenizer_load_vocab(source);
}

// The config.json that --config_name or --model_name_or_path names, or a preset's name.
std::string config_source(const TrainingArguments& args) {
  if (!args.config_name) return (fs::path(*args.model_name_or_path) / "config.json").string();
  if (fs::is_directory(*args.config_name)) {
    return (fs::path(*args.config_name) / "config.json").string();
  }
  return *args.config_name;
}

BertConfig config_from_name(const std::string& name, const Tokenizer& tokenizer) {
  if (fs::is_directory(name)) return bert_config_read((fs::path(name) / "config.json").string());
  if (fs::exists(name)) return bert_config_read(name);
  check(std::find(kPresets.begin(), kPresets.end(), name) != kPresets.end(), "--config_name", "'",
        name,
        "' is neither a config.json nor a named configuration (tiny, mini, small, "
        "medium, base, large)");
  BertConfig config = bert_config_preset(name);
  // A new model's embeddings are sized by its tokenizer.
  config.vocab_size = tokenizer.vocab_size();
  config.pad_token_id = tokenizer.pad_id();
  return config;
}

std::string name_list(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", '" : "'") + names[i] + "'";
  return out + "]";
}

}  // namespace

ModelSetup load_model_config(const TrainingArguments& args) {
  const auto& model_dir = args.model_name_or_path;
  check_usage(model_dir || args.config_name, "--model_name_or_path",
        "give a model: --model_name_or_path DIR (a Hugging Face model folder), or --config_name ",
        "tiny|mini|small|medium|base|large|PATH with --tokenizer_name DIR|vocab.txt to start "
        "from new weights");
  if (model_dir) {
    check(fs::is_directory(*model_dir), "--model_name_or_path", "no such folder: ", *model_dir);
  }
  check_usage(args.tokenizer_name || model_dir, "--tokenizer_name",
        "a model from --config_name needs --tokenizer_name (a tokenizer folder or a vocab.txt)");
  ModelSetup model;
  model.tokenizer = args.tokenizer_name ? load_tokenizer(*args.tokenizer_name, "--tokenizer_name")
                                        : load_tokenizer(*model_dir, "--model_name_or_path");
  model.config = args.config_name
                     ? config_from_name(*args.config_name, *model.tokenizer)
                     : bert_config_read((fs::path(*model_dir) / "config.json").string());
  check(model.tokenizer->vocab_size() <= model.config.vocab_size, "--tokenizer_name",
        "the tokenizer has ", model.tokenizer->vocab_size(),
        " tokens but the model's vocab_size is ", model.config.vocab_size);
  // BertForQuestionAnswering's qa_outputs gives start and end logits: num_labels is 2.
  if (task_kind(args.task) == TaskKind::question_answering && model.config.num_labels() != 2) {
    model.config.set_num_labels(2);
  }
  return model;
}

void load_model_weights(ModelSetup& model, const TrainingArguments& args, std::ostream& log) {
  const TaskKind task = task_kind(args.task);
  const std::string architecture = task_architecture(task);
  Graph graph;
  ParameterSet params = task_parameters(task, graph, model.config);
  if (args.model_name_or_path) {
    const std::string& dir = *args.model_name_or_path;
    LoadReport report = bert_load_weights(params, dir, /*strict=*/false);
    // transformers only warns about names it did not match; none matched is no BERT at all.
    check(report.missing.size() < params.size(), (fs::path(dir) / "model.safetensors").string(),
          "none of its tensors is a parameter of ", architecture, " (unexpected: ",
          name_list(report.unexpected), ")");
    if (!report.unexpected.empty()) {
      log << "Some weights of the model checkpoint at " << dir
          << " were not used when initializing " << architecture << ": "
          << name_list(report.unexpected) << "\n- This IS expected if you are initializing "
          << architecture
          << " from the checkpoint of a model trained on another task or with another "
             "architecture.\n";
    }
    if (!report.missing.empty()) {
      log << "Some weights of " << architecture
          << " were not initialized from the model checkpoint at " << dir
          << " and are newly initialized: " << name_list(report.missing)
          << "\nYou should probably TRAIN this model on a down-stream task to be able to use it "
             "for predictions and inference.\n";
    }
  }
  params.initialize(args.seed);
  model.weights = params.state_dict();
  // Last of the model's checks, so that a broken data file or weights file is reported first.
  check(args.max_seq_length <= model.config.max_position_embeddings, config_source(args),
        "\"max_position_embeddings\" ", model.config.max_position_embeddings,
        " is shorter than --max_seq_length ", args.max_seq_length,
        ": the model cannot take sequences that long");
}

}  // namespace kiln::cli
